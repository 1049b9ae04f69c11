"""Fetch a documentation site (or one document) into ``resources/<domain>/``.

The crawl stays under the start URL's prefix (same scheme, host and port, and a path
under the start URL's directory, once dot segments are resolved), within depth, request,
decoded-byte and time limits. It writes into
a temporary folder and renames it into place at the end, with a ``manifest.json``
recording each URL, its local file, sha256, fetch time and content type, so a build
from ``resources/`` is reproducible offline and never sees a half-written crawl.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx

from envfactory.errors import IngestError
from envfactory.ingest.crawl_urls import (
    MANIFEST_NAME,
    _links,
    _local_name,
    _prefix_of,
    _sniff,
    _under,
    normalize_url,
)

__all__ = ["crawl", "ingest", "normalize_url", "CrawlResult", "CrawledPage", "MANIFEST_NAME"]

_MAX_REDIRECTS = 5
_MAX_LISTED = 2000  # skipped URLs listed in the manifest at most; the rest are counted
_SKIP_EXT = re.compile(
    r"\.(png|jpe?g|gif|svg|ico|webp|bmp|css|js|mjs|map|woff2?|ttf|eot|otf|pdf|zip|gz|"
    r"tgz|tar|mp4|mp3|wav|webm|avi|mov|exe|dmg|wasm)$",
    re.I,
)


@dataclass
class CrawledPage:
    url: str
    file: str  # path relative to the output folder, POSIX separators
    sha256: str
    content_type: str  # json | yaml | markdown | html
    bytes: int
    depth: int
    fetched_at: str


@dataclass
class CrawlResult:
    """What a crawl fetched, skipped and refused. ``out_dir`` holds the files."""

    start_url: str
    prefix: str
    out_dir: Path
    pages: list[CrawledPage] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"url", "reason"}
    refused: list[dict[str, str]] = field(default_factory=list)  # redirects/links that left the prefix
    bytes_total: int = 0
    limit_hit: str | None = None  # "max_pages" | "max_bytes" | "deadline" | None
    requests: int = 0  # HTTP requests made (redirects and failures included)
    unlisted: int = 0  # skipped URLs not listed (past _MAX_LISTED)

    def skip(self, url: str, reason: str) -> None:
        if len(self.skipped) < _MAX_LISTED:
            self.skipped.append({"url": url[:2000], "reason": reason})
        else:
            self.unlisted += 1

    def manifest(self) -> dict[str, Any]:
        return {
            "start_url": self.start_url,
            "prefix": self.prefix,
            "pages": [asdict(p) for p in self.pages],
            "skipped": self.skipped,
            "skipped_unlisted": self.unlisted,
            "refused": self.refused,
            "bytes_total": self.bytes_total,
            "requests": self.requests,
            "limit_hit": self.limit_hit,
        }


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _replace_dir(tmp: Path, out_dir: Path) -> None:
    """Move ``tmp`` to ``out_dir`` replacing it, so readers see the old or the new, whole."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old)
        os.replace(out_dir, old)
    try:
        os.replace(tmp, out_dir)
    except OSError:
        if old is not None:
            os.replace(old, out_dir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def crawl(
    url: str,
    out_dir: str | os.PathLike[str],
    *,
    max_depth: int = 3,
    max_pages: int = 200,
    max_bytes: int = 50_000_000,
    timeout: float = 10.0,
    deadline: float = 300.0,
    client: httpx.Client | None = None,
) -> CrawlResult:
    """Fetch ``url`` and the documentation it links to under its prefix into ``out_dir``.

    Follows HTML ``<a href>`` links, Markdown links and relative-file ``$ref``s that
    stay under the prefix (the start URL's directory on the same scheme, host and port,
    after dot segments are resolved), up to ``max_depth`` links away. Limits: ``max_pages``
    HTTP requests in all (every request counts, redirects and failures included),
    ``max_bytes`` of decoded bodies in all (counted while streaming, so a compression bomb
    stops at the limit), ``timeout`` seconds per request and ``deadline`` seconds for the
    whole crawl. Redirects are followed only while they stay under the prefix; others are
    refused and listed in ``CrawlResult.refused``. Off-site links, images, scripts and other
    non-documents are listed as skipped. ``out_dir`` is replaced as a whole once the crawl
    has succeeded. Raises IngestError naming the URL when the start URL cannot be fetched.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise IngestError(f"{url}: not an http(s) URL")
    if (
        min(max_depth, max_pages, max_bytes) < 0
        or min(max_pages, max_bytes) == 0
        or timeout <= 0
        or deadline <= 0
    ):
        raise IngestError(f"{url}: crawl limits must be positive (max_depth may be 0)")
    url = normalize_url(urldefrag(url)[0])
    out = Path(out_dir)
    result = CrawlResult(start_url=url, prefix=_prefix_of(url), out_dir=out)
    own_client = client is None
    http = client or httpx.Client(
        timeout=timeout,
        follow_redirects=False,
        headers={"User-Agent": "envfactory-crawler", "Accept-Encoding": _ACCEPT_ENCODING},
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    limits = {
        "max_depth": max_depth,
        "max_pages": max_pages,
        "max_bytes": max_bytes,
        "timeout": timeout,
        "deadline": deadline,
    }
    try:
        _Crawl(http, result, tmp, limits).run()
        (tmp / MANIFEST_NAME).write_text(
            json.dumps(
                {**result.manifest(), "fetched_at": _now(), "limits": limits}, indent=2, sort_keys=False
            )
            + "\n",
            encoding="utf-8",
        )
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if own_client:
            http.close()
    return result


class _Crawl:
    """One breadth-first crawl into ``tmp`` under the limits (see ``crawl``)."""

    def __init__(self, http: httpx.Client, result: CrawlResult, tmp: Path, limits: dict[str, Any]):
        self.http, self.result, self.tmp, self.limits = http, result, tmp, limits
        self.ends = time.monotonic() + limits["deadline"]
        self.queue: deque[tuple[str, int]] = deque([(result.start_url, 0)])
        self.seen = {result.start_url}
        self.taken: set[str] = set()

    def _stop(self, limit: str, url: str, reason: str) -> None:
        self.result.limit_hit = self.result.limit_hit or limit
        self.result.skip(url, reason)

    def run(self) -> None:
        result, start = self.result, self.result.start_url
        while self.queue:
            page_url, depth = self.queue.popleft()
            if result.requests >= self.limits["max_pages"]:
                self._stop("max_pages", page_url, f"page limit {self.limits['max_pages']} reached (requests)")
                continue
            if time.monotonic() >= self.ends:
                self._stop("deadline", page_url, f"crawl deadline of {self.limits['deadline']:g} s passed")
                continue
            fetched = _fetch(self, page_url)
            if fetched is None:
                if page_url == start and not result.pages:
                    last = (result.refused or result.skipped or [{"reason": "no response"}])[-1]
                    raise IngestError(f"{start}: cannot fetch start page ({last['reason']})")
                continue
            final_url, content_type, data = fetched
            kind = _sniff(content_type, final_url, data)
            if kind is None:
                result.skip(final_url, f"not documentation ({content_type or 'unknown type'})")
                if page_url == start:
                    raise IngestError(
                        f"{start}: start page is not documentation ({content_type or 'unknown type'})"
                    )
                continue
            self._store(final_url, kind, data, depth)
            if depth < self.limits["max_depth"]:
                self._follow(_links(kind, data.decode("utf-8", errors="replace"), final_url), depth)

    def _store(self, url: str, kind: str, data: bytes, depth: int) -> None:
        name = _local_name(url, self.result.prefix, kind, self.taken)
        target = self.tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.result.bytes_total += len(data)
        self.result.pages.append(
            CrawledPage(
                url=url,
                file=name,
                sha256=hashlib.sha256(data).hexdigest(),
                content_type=kind,
                bytes=len(data),
                depth=depth,
                fetched_at=_now(),
            )
        )

    def _follow(self, links: list[str], depth: int) -> None:
        result, cap = self.result, self.limits["max_pages"]
        for link in links:
            if link in self.seen:
                continue
            if result.requests + len(self.queue) >= cap:  # never queue what the page limit cannot fetch
                self._stop("max_pages", link, f"page limit {cap} reached (requests)")
                continue
            self.seen.add(link)
            if not _under(link, result.prefix):
                result.skip(link, f"off-site: not under {result.prefix}")
            elif _SKIP_EXT.search(urlsplit(link).path):
                result.skip(link, "not documentation (by extension)")
            else:
                self.queue.append((link, depth + 1))


def _fetch(c: _Crawl, url: str) -> tuple[str, str, bytes] | None:
    """GET with manual, prefix-checked redirects, the byte budget and the deadline. None when not fetched."""
    result, current = c.result, url
    for _ in range(_MAX_REDIRECTS + 1):
        left = c.ends - time.monotonic()
        if result.requests >= c.limits["max_pages"] or left <= 0:
            c._stop("max_pages" if left > 0 else "deadline", current, "a limit was reached during redirects")
            return None
        result.requests += 1
        try:
            with c.http.stream(
                "GET", current, timeout=min(c.limits["timeout"], left), follow_redirects=False
            ) as resp:
                if resp.is_redirect:
                    nxt = normalize_url(urldefrag(urljoin(current, resp.headers.get("location", "")))[0])
                    if not _under(nxt, result.prefix):
                        result.refused.append(
                            {"url": current, "reason": f"redirect to {nxt} leaves {result.prefix}"}
                        )
                        return None
                    current = nxt
                    continue
                if resp.status_code >= 400:
                    result.skip(current, f"HTTP {resp.status_code}")
                    return None
                data = _read_body(c, resp, current)
                return None if data is None else (current, resp.headers.get("content-type", ""), data)
        except httpx.HTTPError as e:
            result.skip(current, f"{type(e).__name__}: {' '.join(str(e).split())[:300] or 'failed'}")
            return None
    result.skip(url, f"more than {_MAX_REDIRECTS} redirects")
    return None


def _read_body(c: _Crawl, resp: httpx.Response, url: str) -> bytes | None:
    """The decoded body, counted against the bytes left as it streams (None when over a limit)."""
    budget = c.limits["max_bytes"] - c.result.bytes_total
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > budget:
        c._stop("max_bytes", url, f"byte limit: {declared} bytes > {budget} left")
        return None
    encodings = [e.strip().lower() for e in resp.headers.get("content-encoding", "").split(",") if e.strip()]
    bad = [e for e in encodings if e not in _DECODERS]
    if bad:
        c.result.skip(url, f"unsupported Content-Encoding {', '.join(bad)[:100]}")
        return None
    chunks, size = [], 0
    try:
        for chunk in _decoded(resp.iter_raw(), encodings):
            size += len(chunk)
            if size > budget:
                c._stop("max_bytes", url, f"byte limit: more than {budget} decoded bytes left")
                return None
            if time.monotonic() >= c.ends:
                c._stop("deadline", url, f"crawl deadline of {c.limits['deadline']:g} s passed while reading")
                return None
            chunks.append(chunk)
    except zlib.error as e:
        c.result.skip(url, f"cannot decode the {'/'.join(encodings)} body: {e}")
        return None
    return b"".join(chunks)


# ---- Content-Encoding, decoded in bounded steps --------------------------------------------------
# httpx's decoders inflate a whole network chunk at once: 2 KB of ``gzip, gzip`` can become
# gigabytes in one call. These yield at most _STEP bytes at a time, so the byte limit stops a bomb.

_STEP = 1 << 16
_DECODERS = {
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
    "identity": 0,
}
_ACCEPT_ENCODING = "gzip, deflate"


def _inflate(chunks: Iterator[bytes], encoding: str) -> Iterator[bytes]:
    wbits = _DECODERS[encoding]
    if not wbits:
        yield from chunks
        return
    d = zlib.decompressobj(wbits)
    first = True
    for data in chunks:
        if first and data:
            first = False
            if encoding == "deflate" and (data[0] & 0x0F) != 8:
                d = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send it
        while data:
            if d.eof:  # another gzip member follows; its bytes are in ``data``
                d = zlib.decompressobj(wbits)
            out = d.decompress(data, _STEP)
            if out:
                yield out
            data = d.unconsumed_tail or (d.unused_data if d.eof else b"")
            while len(out) == _STEP and not data and not d.eof:  # output still pending inside zlib
                out = d.decompress(b"", _STEP)
                if out:
                    yield out
    tail = d.flush()
    if tail:
        yield tail


def _decoded(raw: Iterator[bytes], encodings: list[str]) -> Iterator[bytes]:
    """The body with its content codings undone, last applied first."""
    stream = raw
    for enc in reversed(encodings):
        stream = _inflate(stream, enc)
    return stream


def _copy_into(tmp: Path, files: list[tuple[Path, str]], source: str) -> list[dict[str, Any]]:
    entries = []
    for src, name in files:
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        data = target.read_bytes()
        entries.append(
            {
                "url": (Path(source) / name).as_posix() if Path(source).is_dir() else source,
                "file": name,
                "sha256": hashlib.sha256(data).hexdigest(),
                "content_type": _sniff("", name, data) or "unknown",
                "bytes": len(data),
                "depth": 0,
                "fetched_at": _now(),
            }
        )
    return entries


def ingest(
    source: str | os.PathLike[str],
    domain: str,
    resources_root: str | os.PathLike[str] = Path("resources"),
    **crawl_options: Any,
) -> Path:
    """Bring documentation into ``resources_root/<domain>/`` and return that folder.

    SOURCE is an http(s) URL (crawled; the folder is replaced), a folder (copied; the
    folder is replaced) or one file (added to the folder, replacing a file of that name).
    Every case writes ``manifest.json`` (file, sha256, origin, time). Raises IngestError
    for a missing source, a bad domain name or an unreachable URL.
    """
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", domain):
        raise IngestError(f"{domain!r}: invalid domain name (letters, digits, '_', '-', '.')")
    dest = Path(resources_root) / domain
    src = str(source)
    if src.startswith(("http://", "https://")):
        crawl(src, dest, **crawl_options)
        return dest
    path = Path(source)
    if not path.exists():
        raise IngestError(f"{path}: no such file or folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        if path.is_dir():
            files = sorted(
                (p, p.relative_to(path).as_posix())
                for p in path.rglob("*")
                if p.is_file()
                and p.name != MANIFEST_NAME
                and not any(x.startswith(".") for x in p.relative_to(path).parts)
            )
            if not files:
                raise IngestError(f"{path}: folder holds no files")
            entries = _copy_into(tmp, files, str(path))
        else:
            entries = []
            if dest.is_dir():  # keep what is there; the new file replaces one of its name
                old_manifest = dest / MANIFEST_NAME
                try:
                    old = (
                        json.loads(old_manifest.read_text(encoding="utf-8")) if old_manifest.is_file() else {}
                    )
                except ValueError:  # a damaged manifest: the files are kept, their old entries are not
                    old = {}
                if not isinstance(old, dict):
                    old = {}
                keep = [
                    p
                    for p in dest.rglob("*")
                    if p.is_file() and p.name != MANIFEST_NAME and p.name != path.name
                ]
                for p in keep:
                    t = tmp / p.relative_to(dest)
                    t.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(p, t)
                kept = {p.relative_to(dest).as_posix() for p in keep}
                entries = [e for e in old.get("pages", []) if e.get("file") in kept]
            entries += _copy_into(tmp, [(path, path.name)], str(path))
        manifest = {
            "start_url": str(path),
            "prefix": str(path),
            "pages": entries,
            "skipped": [],
            "refused": [],
            "fetched_at": _now(),
        }
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _replace_dir(tmp, dest)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise IngestError(f"{path}: cannot copy into {dest} ({e.strerror or e})") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest

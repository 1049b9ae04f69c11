"""Fetch a documentation site (or one document) into ``resources/<domain>/``.

The crawl stays under the start URL's prefix (same scheme, host and port, and a path
under the start URL's directory), within depth, page and byte limits. It writes into
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
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import httpx

from envfactory.errors import IngestError

__all__ = ["crawl", "ingest", "CrawlResult", "CrawledPage", "MANIFEST_NAME"]

MANIFEST_NAME = "manifest.json"
_MAX_REDIRECTS = 5
_DOC_TYPES = {"json": ".json", "yaml": ".yaml", "markdown": ".md", "html": ".html"}
_SKIP_EXT = re.compile(r"\.(png|jpe?g|gif|svg|ico|webp|bmp|css|js|mjs|map|woff2?|ttf|eot|otf|pdf|zip|gz|"
                       r"tgz|tar|mp4|mp3|wav|webm|avi|mov|exe|dmg|wasm)$", re.I)


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
    limit_hit: str | None = None  # "max_pages" | "max_bytes" | None

    def manifest(self) -> dict[str, Any]:
        return {"start_url": self.start_url, "prefix": self.prefix,
                "pages": [asdict(p) for p in self.pages], "skipped": self.skipped,
                "refused": self.refused, "bytes_total": self.bytes_total, "limit_hit": self.limit_hit}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _prefix_of(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path or "/"
    if not path.endswith("/"):
        path = path.rsplit("/", 1)[0] + "/"
    return f"{parts.scheme}://{parts.netloc.lower()}{path}"


def _under(url: str, prefix: str) -> bool:
    p = urlsplit(url)
    base = f"{p.scheme}://{p.netloc.lower()}{p.path or '/'}"
    return base.startswith(prefix) or base + "/" == prefix


def _sniff(content_type: str, url: str, data: bytes) -> str | None:
    """json | yaml | markdown | html, or None for anything that is not documentation."""
    ct = content_type.split(";")[0].strip().lower()
    path = urlsplit(url).path.lower()
    ext = os.path.splitext(path)[1]
    if ct.startswith(("image/", "audio/", "video/", "font/")) or ct in (
            "application/pdf", "application/zip", "application/octet-stream", "text/css",
            "application/javascript", "text/javascript", "application/wasm"):
        if ct != "application/octet-stream" or b"\x00" in data[:4096]:
            return None
    if b"\x00" in data[:4096]:
        return None
    if "json" in ct or ext == ".json":
        return "json"
    if "yaml" in ct or ext in (".yaml", ".yml"):
        return "yaml"
    if "markdown" in ct or ext in (".md", ".markdown"):
        return "markdown"
    if "html" in ct or ext in (".html", ".htm"):
        return "html"
    head = data[:2000].lstrip().lower()
    if head.startswith((b"{", b"[")):
        return "json"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head:
        return "html"
    if head.startswith((b"openapi:", b"swagger:")) or b"\nopenapi:" in head:
        return "yaml"
    if ct.startswith("text/"):
        return "markdown"
    return None


def _links(kind: str, text: str, base: str) -> list[str]:
    found: list[str] = []
    if kind == "html":
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(text, "html.parser")
        found = [str(a.get("href")) for a in soup.find_all("a") if a.get("href")]
    elif kind == "markdown":
        found = re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)
        found += re.findall(r"^\s*\[[^\]]+\]:\s*(\S+)", text, re.M)
    elif kind in ("json", "yaml"):
        # relative-file $refs ("schemas/Pet.yaml#/Pet") are part of the document
        found = re.findall(r"""\$ref["']?\s*:\s*["']?([^"'#\s,}][^"'\s,}]*)""", text)
    out = []
    for href in found:
        href = href.strip()
        if href.startswith(("mailto:", "javascript:", "tel:", "data:", "#")):
            continue
        url, _ = urldefrag(urljoin(base, href))
        if urlsplit(url).scheme in ("http", "https"):
            out.append(url)
    return out


def _local_name(url: str, prefix: str, kind: str, taken: set[str]) -> str:
    rel = url[len(prefix):] if url.startswith(prefix) else urlsplit(url).path.lstrip("/")
    rel, _, query = rel.partition("?")
    parts = [re.sub(r"[^\w.@+-]", "_", unquote(p)) for p in PurePosixPath(rel).parts if p not in ("", ".", "..")]
    parts = [p.lstrip(".") or "_" for p in parts]
    if not parts or url.split("?")[0].endswith("/"):
        parts.append("index")
    stem = parts[-1]
    if query:
        stem += "_" + hashlib.sha256(query.encode()).hexdigest()[:8]
    if os.path.splitext(stem)[1].lower() not in (".json", ".yaml", ".yml", ".md", ".markdown", ".html", ".htm"):
        stem += _DOC_TYPES[kind]
    parts[-1] = stem
    name = "/".join(parts)
    if name == MANIFEST_NAME or name in taken:
        root, ext = os.path.splitext(name)
        name = f"{root}_{hashlib.sha256(url.encode()).hexdigest()[:8]}{ext}"
    taken.add(name)
    return name


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


def crawl(url: str, out_dir: str | os.PathLike[str], *, max_depth: int = 3, max_pages: int = 200,
          max_bytes: int = 50_000_000, timeout: float = 10.0,
          client: httpx.Client | None = None) -> CrawlResult:
    """Fetch ``url`` and the documentation it links to under its prefix into ``out_dir``.

    Follows HTML ``<a href>`` links, Markdown links and relative-file ``$ref``s that
    stay under the prefix (the start URL's directory on the same scheme, host and port),
    up to ``max_depth`` links away, ``max_pages`` documents and ``max_bytes`` in all.
    Redirects are followed only while they stay under the prefix; others are refused
    and listed in ``CrawlResult.refused``. Images, scripts and other non-documents are
    skipped. ``out_dir`` is replaced as a whole once the crawl has succeeded.
    Raises IngestError naming the URL when the start URL cannot be fetched.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise IngestError(f"{url}: not an http(s) URL")
    url = urldefrag(url)[0]
    prefix = _prefix_of(url)
    out = Path(out_dir)
    result = CrawlResult(start_url=url, prefix=prefix, out_dir=out)
    own_client = client is None
    http = client or httpx.Client(timeout=timeout, follow_redirects=False,
                                  headers={"User-Agent": "envfactory-crawler"})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        queue: deque[tuple[str, int]] = deque([(url, 0)])
        seen = {url}
        taken: set[str] = set()
        while queue:
            page_url, depth = queue.popleft()
            if len(result.pages) >= max_pages:
                result.limit_hit = "max_pages"
                result.skipped.append({"url": page_url, "reason": f"page limit {max_pages} reached"})
                continue
            fetched = _fetch(http, page_url, prefix, max_bytes - result.bytes_total, timeout, result)
            if fetched is None:
                if page_url == url and not result.pages:
                    reason = (result.refused or result.skipped)[-1]["reason"] if (result.refused or result.skipped) else "no response"
                    raise IngestError(f"{url}: cannot fetch start page ({reason})")
                continue
            final_url, content_type, data = fetched
            kind = _sniff(content_type, final_url, data)
            if kind is None:
                result.skipped.append({"url": final_url, "reason": f"not documentation ({content_type or 'unknown type'})"})
                if page_url == url:
                    raise IngestError(f"{url}: start page is not documentation ({content_type or 'unknown type'})")
                continue
            name = _local_name(final_url, prefix, kind, taken)
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            result.bytes_total += len(data)
            result.pages.append(CrawledPage(url=final_url, file=name, sha256=hashlib.sha256(data).hexdigest(),
                                            content_type=kind, bytes=len(data), depth=depth, fetched_at=_now()))
            if depth >= max_depth:
                continue
            text = data.decode("utf-8", errors="replace")
            for link in _links(kind, text, final_url):
                if link in seen:
                    continue
                seen.add(link)
                if not _under(link, prefix):
                    continue  # an ordinary link off the site: not ours to follow
                if _SKIP_EXT.search(urlsplit(link).path):
                    result.skipped.append({"url": link, "reason": "not documentation (by extension)"})
                    continue
                queue.append((link, depth + 1))
        (tmp / MANIFEST_NAME).write_text(json.dumps({**result.manifest(), "fetched_at": _now(),
                                                      "limits": {"max_depth": max_depth, "max_pages": max_pages,
                                                                 "max_bytes": max_bytes}},
                                                     indent=2, sort_keys=False) + "\n", encoding="utf-8")
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if own_client:
            http.close()
    return result


def _fetch(http: httpx.Client, url: str, prefix: str, budget: int, timeout: float,
           result: CrawlResult) -> tuple[str, str, bytes] | None:
    """GET with manual, prefix-checked redirects and a byte budget. None when not fetched."""
    current = url
    for _ in range(_MAX_REDIRECTS + 1):
        try:
            with http.stream("GET", current, timeout=timeout, follow_redirects=False) as resp:
                if resp.is_redirect:
                    location = resp.headers.get("location", "")
                    nxt = urldefrag(urljoin(current, location))[0]
                    if not _under(nxt, prefix):
                        result.refused.append({"url": current, "reason": f"redirect to {nxt} leaves {prefix}"})
                        return None
                    current = nxt
                    continue
                if resp.status_code >= 400:
                    result.skipped.append({"url": current, "reason": f"HTTP {resp.status_code}"})
                    return None
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > budget:
                    result.limit_hit = "max_bytes"
                    result.skipped.append({"url": current, "reason": f"byte limit: {declared} bytes > {budget} left"})
                    return None
                chunks, size = [], 0
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > budget:
                        result.limit_hit = "max_bytes"
                        result.skipped.append({"url": current, "reason": f"byte limit: more than {budget} bytes left"})
                        return None
                    chunks.append(chunk)
                return current, resp.headers.get("content-type", ""), b"".join(chunks)
        except httpx.HTTPError as e:
            result.skipped.append({"url": current, "reason": f"{type(e).__name__}: {' '.join(str(e).split()) or 'failed'}"})
            return None
    result.skipped.append({"url": url, "reason": f"more than {_MAX_REDIRECTS} redirects"})
    return None


def _copy_into(tmp: Path, files: list[tuple[Path, str]], source: str) -> list[dict[str, Any]]:
    entries = []
    for src, name in files:
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        data = target.read_bytes()
        entries.append({"url": (Path(source) / name).as_posix() if Path(source).is_dir() else source,
                        "file": name, "sha256": hashlib.sha256(data).hexdigest(),
                        "content_type": _sniff("", name, data) or "unknown", "bytes": len(data),
                        "depth": 0, "fetched_at": _now()})
    return entries


def ingest(source: str | os.PathLike[str], domain: str, resources_root: str | os.PathLike[str] = Path("resources"),
           **crawl_options: Any) -> Path:
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
            files = sorted((p, p.relative_to(path).as_posix()) for p in path.rglob("*")
                           if p.is_file() and p.name != MANIFEST_NAME
                           and not any(x.startswith(".") for x in p.relative_to(path).parts))
            if not files:
                raise IngestError(f"{path}: folder holds no files")
            entries = _copy_into(tmp, files, str(path))
        else:
            entries = []
            if dest.is_dir():  # keep what is there; the new file replaces one of its name
                old_manifest = dest / MANIFEST_NAME
                try:
                    old = json.loads(old_manifest.read_text(encoding="utf-8")) if old_manifest.is_file() else {}
                except ValueError:  # a damaged manifest: the files are kept, their old entries are not
                    old = {}
                if not isinstance(old, dict):
                    old = {}
                keep = [p for p in dest.rglob("*") if p.is_file() and p.name != MANIFEST_NAME and p.name != path.name]
                for p in keep:
                    t = tmp / p.relative_to(dest)
                    t.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(p, t)
                kept = {p.relative_to(dest).as_posix() for p in keep}
                entries = [e for e in old.get("pages", []) if e.get("file") in kept]
            entries += _copy_into(tmp, [(path, path.name)], str(path))
        manifest = {"start_url": str(path), "prefix": str(path), "pages": entries, "skipped": [],
                    "refused": [], "fetched_at": _now()}
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _replace_dir(tmp, dest)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise IngestError(f"{path}: cannot copy into {dest} ({e.strerror or e})") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest

"""What a crawled URL and page are: normalized URLs, the prefix rule, content sniffing, links, local names.

Pure functions (no I/O), used by the crawler (``crawl.py``) and by ``ingest`` of local files.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urldefrag, urljoin, urlsplit, urlunsplit

__all__ = ["normalize_url", "MANIFEST_NAME"]

MANIFEST_NAME = "manifest.json"
_MAX_SEGMENT = 100  # characters of one local path segment (file systems stop at 255 bytes)
_DOC_TYPES = {"json": ".json", "yaml": ".yaml", "markdown": ".md", "html": ".html"}


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4: ``/docs/../secret/x.md`` -> ``/secret/x.md`` (``%2e`` counts as a dot)."""
    segs = re.sub(r"%2[eE]", ".", path).split("/")
    out: list[str] = []
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg in (".", ".."):
            if seg == ".." and len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(seg)
    joined = "/".join(out)
    return joined if joined.startswith("/") else "/" + joined


def normalize_url(url: str) -> str:
    """``url`` with a lower-case scheme and host and its dot segments resolved (checked and fetched so)."""
    p = urlsplit(url)
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), _remove_dot_segments(p.path or "/"), p.query, ""))


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
        "application/pdf",
        "application/zip",
        "application/octet-stream",
        "text/css",
        "application/javascript",
        "text/javascript",
        "application/wasm",
    ):
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
        try:
            url, _ = urldefrag(urljoin(base, href))
            if urlsplit(url).scheme in ("http", "https"):
                out.append(normalize_url(url))
        except ValueError:  # e.g. an invalid IPv6 literal: not a link we can follow
            continue
    return out


def _short(segment: str) -> str:
    """A path segment cut to _MAX_SEGMENT characters (a hash keeps cut names apart; the extension stays)."""
    if len(segment) <= _MAX_SEGMENT:
        return segment
    root, ext = os.path.splitext(segment)
    ext = ext if len(ext) <= 10 else ""
    return f"{root[: _MAX_SEGMENT - 20]}_{hashlib.sha256(segment.encode()).hexdigest()[:8]}{ext}"


def _local_name(url: str, prefix: str, kind: str, taken: set[str]) -> str:
    rel = url[len(prefix) :] if url.startswith(prefix) else urlsplit(url).path.lstrip("/")
    rel, _, query = rel.partition("?")
    parts = [
        re.sub(r"[^\w.@+-]", "_", unquote(p)) for p in PurePosixPath(rel).parts if p not in ("", ".", "..")
    ]
    parts = [_short(p.lstrip(".") or "_") for p in parts][-20:]  # no deeper than 20 folders
    if not parts or url.split("?")[0].endswith("/"):
        parts.append("index")
    stem = parts[-1]
    if query:
        stem += "_" + hashlib.sha256(query.encode()).hexdigest()[:8]
    if os.path.splitext(stem)[1].lower() not in (
        ".json",
        ".yaml",
        ".yml",
        ".md",
        ".markdown",
        ".html",
        ".htm",
    ):
        stem += _DOC_TYPES[kind]
    parts[-1] = _short(stem)
    name = "/".join(parts)
    if name == MANIFEST_NAME or name in taken:
        root, ext = os.path.splitext(name)
        name = f"{root}_{hashlib.sha256(url.encode()).hexdigest()[:8]}{ext}"
    taken.add(name)
    return name

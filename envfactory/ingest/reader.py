"""Read documentation files from disk (or bytes) into ApiDocs, sniffing the format.

Every failure to read one input is an IngestError whose one-line message names the
input and the cause; nothing else escapes ``load_apidoc``.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml

from envfactory.errors import IngestError
from envfactory.ingest.model import ApiDoc
from envfactory.spec import load_yaml_bounded

__all__ = ["load_apidoc", "load_apidocs", "document_files", "READERS", "MAX_DOC_BYTES", "DOC_SUFFIXES"]

log = logging.getLogger(__name__)

MAX_DOC_BYTES = 50_000_000
DOC_SUFFIXES = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".md": "markdown",
    ".mdx": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}
_SKIP_NAMES = {
    "manifest.json",
    "README.md",
    "LICENSE",
    "LICENSE.md",
}  # manifest: written by ingest; READMEs describe the folder

Kind = Literal["json", "yaml", "markdown", "html"]

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader that keeps timestamps as the strings they were written as (an
    OpenAPI document means "2020-01-01" as a string; "0000-00-00" must not crash),
    reads YAML's ``=`` value key and unknown tags as plain data. Duplicate keys are
    tolerated (last one wins), as PyYAML always did."""


def _timestamp_as_str(loader: yaml.Loader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _any_tag(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_str)
_Loader.add_constructor("tag:yaml.org,2002:value", _timestamp_as_str)
_Loader.add_multi_constructor("", _any_tag)


def _destringify_dates(v: Any) -> Any:
    """Belt and braces for loaders that still produced date objects."""
    if isinstance(v, dict):
        return {
            (_destringify_dates(k) if isinstance(k, (_dt.date,)) else k): _destringify_dates(x)
            for k, x in v.items()
        }
    if isinstance(v, list):
        return [_destringify_dates(x) for x in v]
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    return v


def parse_yaml(text: str, source: str) -> Any:
    try:
        return load_yaml_bounded(text, _Loader)  # a SafeLoader subclass; refuses alias bombs
    except yaml.YAMLError as e:
        where = ""
        mark = getattr(e, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}"
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise IngestError(f"{source}: malformed YAML{where}: {problem}") from e
    except (ValueError, TypeError, RecursionError) as e:
        raise IngestError(f"{source}: malformed YAML: {_one_line(e)}") from e


def _one_line(e: BaseException) -> str:
    s = " ".join(str(e).split())
    return s[:300] or type(e).__name__


def _decode(data: bytes, source: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise IngestError(f"{source}: undecodable UTF-16 text") from e
    if b"\x00" in data[:1_000_000]:
        raise IngestError(f"{source}: binary file (contains NUL bytes), not a documentation text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise IngestError(f"{source}: not UTF-8 text (undecodable byte at offset {e.start})") from e


def sniff(text: str, name: str = "") -> Kind | None:
    """Guess the format from the file name, then from the content."""
    suffix = os.path.splitext(name.lower())[1]
    if suffix in DOC_SUFFIXES:
        return DOC_SUFFIXES[suffix]  # type: ignore[return-value]
    head = text.lstrip()[:2000]
    low = head.lower()
    if head.startswith(("{", "[")):
        return "json"
    if (
        low.startswith(("<!doctype html", "<html", "<?xml"))
        or "<body" in low
        or "<h1" in low
        or "<div" in low
    ):
        return "html"
    for line in head.splitlines():
        if line.startswith(("openapi:", "swagger:", '"openapi":', "'openapi':", "swagger :")):
            return "yaml"
    if not head:
        return None
    if head.startswith("#") or "\n#" in head or "\n===" in head or "```" in head:
        return "markdown"
    first = head.splitlines()[0]
    if first.startswith("%YAML") or (first != "---" and ":" in first and not first.startswith(("*", "-"))):
        return "yaml"
    return "markdown"


def _parse_structured(text: str, kind: Kind, source: str) -> Any:
    if kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            # some ".json" files are YAML in disguise; YAML is a JSON superset
            try:
                return load_yaml_bounded(text, _Loader)
            except (
                yaml.YAMLError,
                ValueError,
                TypeError,
                RecursionError,
            ):  # report the JSON error: JSON was expected
                raise IngestError(
                    f"{source}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}"
                ) from e
        except RecursionError as e:
            raise IngestError(f"{source}: malformed JSON: nested too deeply") from e
    return _destringify_dates(parse_yaml(text, source))


def load_apidoc(
    path_or_bytes: str | os.PathLike[str] | bytes, source: str | None = None, *, format: Kind | None = None
) -> ApiDoc:
    """Read one documentation file (or its bytes) into an ApiDoc.

    The format is ``format`` when given, else sniffed from the name's extension, then
    the content: OpenAPI/Swagger as JSON or YAML, Markdown, or HTML. ``source`` names
    the input in the ApiDoc and in error messages (default: the path).
    Raises IngestError (one line, naming the input) for a missing, oversized (> 50 MB),
    binary, empty or malformed file, and for a page that documents no endpoint.
    """
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        src = source or "<bytes>"
        name = source or ""
        if len(data) > MAX_DOC_BYTES:
            raise IngestError(f"{src}: too large ({len(data)} bytes > {MAX_DOC_BYTES})")
    else:
        path = Path(path_or_bytes)
        src = source or str(path)
        name = path.name
        try:
            size = path.stat().st_size
        except OSError as e:
            raise IngestError(f"{src}: cannot read ({e.strerror or e})") from e
        if path.is_dir():
            raise IngestError(f"{src}: is a folder; use load_apidocs")
        if size > MAX_DOC_BYTES:
            raise IngestError(f"{src}: too large ({size} bytes > {MAX_DOC_BYTES})")
        try:
            data = path.read_bytes()
        except OSError as e:
            raise IngestError(f"{src}: cannot read ({e.strerror or e})") from e
    text = _decode(data, src)
    if not text.strip():
        raise IngestError(f"{src}: empty document")
    kind = format or sniff(text, name)
    reader = READERS.get(_READER_OF.get(kind or "", ""))
    if reader is None:
        raise IngestError(f"{src}: unrecognized document format")
    return reader(text, src, kind)  # type: ignore[arg-type]


# ---- readers by name: (text, source, kind) -> ApiDoc; each loads its parser on first use ----------

Reader = Callable[[str, str, Kind], ApiDoc]


def _read_openapi(text: str, src: str, kind: Kind) -> ApiDoc:
    from envfactory.ingest.openapi import read_openapi

    doc = _parse_structured(text, kind, src)
    if doc is None or doc == {} or doc == []:
        raise IngestError(f"{src}: empty document")
    return read_openapi(doc, src)


def _read_markdown(text: str, src: str, kind: Kind) -> ApiDoc:
    from envfactory.ingest.markdown import read_markdown

    return read_markdown(text, src)


def _read_html(text: str, src: str, kind: Kind) -> ApiDoc:
    from envfactory.ingest.html import read_html

    return read_html(text, src)


READERS: dict[str, Reader] = {
    "openapi": _read_openapi,  # OpenAPI 3.0/3.1 and Swagger 2.0, as JSON or YAML
    "markdown": _read_markdown,  # Markdown reference pages
    "html": _read_html,  # HTML reference pages
}
_READER_OF: dict[str, str] = {"json": "openapi", "yaml": "openapi", "markdown": "markdown", "html": "html"}


def _merge(docs: list[ApiDoc], title: str, source: str) -> ApiDoc:
    ops, seen, warnings = [], set(), []
    base_url = next((d.base_url for d in docs if d.base_url), None)
    for d in docs:
        warnings += [f"{Path(d.source).name}: {w}" for w in d.warnings]
        for op in d.operations:
            if op.key in seen:
                warnings.append(f"{Path(d.source).name}: duplicate {op.key} ignored")
                continue
            seen.add(op.key)
            ops.append(op)
    schemas: dict[str, dict] = {}
    for d in docs:
        for k, v in d.schemas.items():
            schemas.setdefault(k, v)
    return ApiDoc(
        title=title,
        source=source,
        format=docs[0].format,
        base_url=base_url,
        description=docs[0].description if len(docs) == 1 else "",
        operations=ops,
        schemas=schemas,
        warnings=warnings,
    )


def document_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The documentation files ``load_apidocs`` reads under ``folder``, sorted (READMEs, manifests
    and hidden files are not documentation)."""
    root = Path(folder)
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in DOC_SUFFIXES
        and p.name not in _SKIP_NAMES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def load_apidocs(
    folder: str | os.PathLike[str],
    *,
    merge_pages: bool = True,
    strict: bool = False,
    errors: list[IngestError] | None = None,
) -> list[ApiDoc]:
    """Read every documentation file under ``folder`` (recursively), one ApiDoc per file.

    When the folder holds no OpenAPI/Swagger document, its Markdown pages (or its HTML
    pages) are one API's reference split over pages: with ``merge_pages`` those of one
    format in one directory are merged into one ApiDoc titled after the directory.
    A file that cannot be read is a failed item, not a failed run: it is logged and
    appended to ``errors`` (when given) and skipped, unless ``strict`` re-raises it.
    Raises IngestError when ``folder`` is missing or nothing in it could be read.
    """
    root = Path(folder)
    if not root.is_dir():
        raise IngestError(f"{root}: not a folder")
    files = document_files(root)
    failures: list[IngestError] = []
    loaded: list[tuple[Path, ApiDoc]] = []
    for f in files:
        try:
            loaded.append((f, load_apidoc(f)))
        except IngestError as e:
            if strict:
                raise
            log.warning("%s", e)
            failures.append(e)
    if errors is not None:
        errors.extend(failures)
    if not loaded:
        cause = f"; first failure: {failures[0]}" if failures else ""
        raise IngestError(f"{root}: no readable API documentation found{cause}")
    if not merge_pages:
        return [d for _, d in loaded]
    openapi_dirs = {f.parent for f, d in loaded if d.format in ("openapi3", "openapi31", "swagger2")}
    groups: dict[tuple[Path, str], list[ApiDoc]] = {}
    out: list[ApiDoc | tuple[Path, str]] = []
    for f, d in loaded:
        if d.format in ("markdown", "html") and f.parent not in openapi_dirs:
            key = (f.parent, d.format)
            if key not in groups:
                groups[key] = []
                out.append(key)  # the merged doc goes where the group first appeared
            groups[key].append(d)
        else:
            out.append(d)
    result = []
    for item in out:
        if isinstance(item, ApiDoc):
            result.append(item)
        else:
            docs = groups[item]
            result.append(docs[0] if len(docs) == 1 else _merge(docs, item[0].name, str(item[0])))
    return result

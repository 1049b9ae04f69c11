"""Reader for Markdown API references (Basecamp-, Mastodon-style and the like).

An endpoint is a ``METHOD /path`` written as a heading, a code span that starts a
line or bullet, a line of its own, or the first line of a code block. The heading
above it names the operation; what follows until the next endpoint section gives its
parameters (bullets, ``name`` / ``: description`` definition lists, tables) and its
JSON examples (request when labelled so, else a response), from which schemas are
inferred. The HTML reader turns pages into this same text and reuses this parser.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from envfactory.errors import IngestError
from envfactory.ingest.md_ops import EndpointDraft, base_url, normalize_path, operations, singular
from envfactory.ingest.model import ApiDoc, Parameter

__all__ = ["read_markdown", "normalize_path", "singular"]

_METHODS = "GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS"
_PATH = r"/[^\s`'\"<>)\]|,;]*"
_ENDPOINT = re.compile(rf"(?<![\w/])({_METHODS})\s+({_PATH})")
_AT_START = re.compile(rf"^\s*(?:[-*+]\s+|\d+\.\s+)?(?:\*\*)?`?\s*({_METHODS})\s+({_PATH})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_STATUS = re.compile(r"\b([1-5]\d\d)\b")
_ANCHOR = re.compile(r"\s*\{#([\w-]+)\}\s*$")
_BULLET_PARAM = re.compile(
    r"^\s*[-*+]\s+`([A-Za-z_][\w.\[\]:-]*)`\s*(?:\(([^)]*)\))?\s*(?:[-–—:]\s*|\s+)?(.*)$"
)
_BULLET_PLAIN = re.compile(r"^\s*[-*+]\s+\*{0,2}([A-Za-z_][\w.\[\]-]*)\*{0,2}\s+[-–—:]\s+(.*)$")
_DEF_TERM = re.compile(r"^:?[A-Za-z_][\w.\[\]-]*$")
_SHORTCODE = re.compile(r"\{\{[<%]\s*/?\s*([\w-]+)[^>%]*[>%]\}\}")
_TYPE_WORDS = {
    "string": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "hash": "object",
    "object": "object",
    "array": "array",
    "date": "string",
    "datetime": "string",
}
_WRITE = {"post", "put", "patch"}
_HEADERS = {
    "authorization",
    "idempotency-key",
    "content-type",
    "accept",
    "user-agent",
    "if-match",
    "if-none-match",
    "cookie",
    "accept-language",
}


def _slug(text: str) -> str:
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", text.lower())).strip("-")


def _strip_md(text: str) -> str:
    text = _SHORTCODE.sub(lambda m: "" if m.group(1) != "required" else "(required)", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    # emphasis markers only: underscores inside words (course_id) are part of names
    text = re.sub(r"`|\*{1,2}|(?<!\w)_{1,2}|_{1,2}(?!\w)", "", text).rstrip("\\")
    return " ".join(text.split())


def _parse_json_block(text: str) -> Any:
    t = re.sub(r"^\s*(HTTP/\S+\s+)?[1-5]\d\d\b[^\n{\[]*\n", "", text).strip()  # a "201 Created" line first
    if not t or t[0] not in "{[\"'":
        return _NOPE
    if '"' not in t and "'" in t:  # Barbican's examples quote with ' (Python's repr of a dict)
        t = t.replace("'", '"')
    for candidate in (t, "{" + t + "}"):
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    # tolerate "..." elisions and trailing commas, common in docs
    cleaned = re.sub(r"^\s*(\.\.\.|…|//.*|#.*)\s*,?\s*$", "", t, flags=re.M)  # elisions, comments
    cleaned = re.sub(r",\s*([}\]])", r"\1", cleaned)
    try:
        return json.loads(cleaned)
    except (ValueError, RecursionError):
        return _NOPE


_NOPE = object()


def _type_of(desc: str) -> tuple[dict[str, Any], str]:
    """Mastodon style: 'String. The text ...' / 'Array of String. ...' -> schema, rest."""
    m = re.match(r"^(?:\(required\)\s*)?(Array of\s+)?([A-Za-z]+)(?:\s*\([^)]*\))?\.\s*(.*)$", desc)
    if m and m.group(2).lower() in _TYPE_WORDS:
        base = {"type": _TYPE_WORDS[m.group(2).lower()]}
        if m.group(2).lower() == "datetime":
            base["format"] = "date-time"
        if m.group(2).lower() == "date":
            base["format"] = "date"
        return ({"type": "array", "items": base} if m.group(1) else base), m.group(3)
    return {}, desc


def _guess_schema(name: str, desc: str) -> dict[str, Any]:
    d = desc.lower()
    if "array" in d or name.endswith(("_ids", "[]")):
        return {
            "type": "array",
            "items": {"type": "integer" if name.endswith(("_ids", "_ids[]")) else "string"},
        }
    if "when set to `true`" in desc or "when set to true" in d or "boolean" in d:
        return {"type": "boolean"}
    if "date-time" in d or "datetime" in d or name.endswith("_at"):
        return {"type": "string", "format": "date-time"}
    if re.search(r"\ba date\b", d) or name.endswith("_on"):
        return {"type": "string", "format": "date"}
    if name.endswith("_id") or name == "id" or "integer" in d or "number" in d and "phone" not in d:
        return {"type": "integer"}
    return {"type": "string"}


@dataclass
class _Section:
    """Where the reader is: the latest heading, its anchor, the label that tells request from
    response and a parameter's location, and the endpoints of the section."""

    heading: str = ""
    anchor: str = ""
    context: str = ""
    ops: list = field(default_factory=list)
    pending_required: bool = False


# MDX endpoint components: <Route method="GET">/guilds/[{guild.id}](#DOCS_GUILD)/scheduled-events</Route>
_ROUTE = re.compile(r"<Route\b[^>]*?\bmethod\s*=\s*[\"'{]*([A-Za-z]+)[\"'}]*[^>]*>(.*?)</Route>", re.I)
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _routes_as_text(text: str) -> str:
    """MDX ``<Route method="GET">/path</Route>`` -> ``GET /path`` (links inside the path unwrapped)."""
    if "<Route" not in text and "<route" not in text:
        return text

    def one(m: re.Match) -> str:
        return m.group(1).upper() + " " + _MD_LINK.sub(lambda x: x.group(1), m.group(2)).strip()

    return _ROUTE.sub(one, text)


def _table_rows(lines: list[str]) -> list[dict[str, str]]:
    cells = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]
    if len(cells) < 3 or not all(re.fullmatch(r":?-{2,}:?", c.replace(" ", "")) for c in cells[1] if c):
        return []
    header = [_strip_md(c).lower() for c in cells[0]]
    return [dict(zip(header, [_strip_md(c) for c in row])) for row in cells[2:]]


class _Parser:
    def __init__(self, text: str, source: str):
        self.source = source
        self.lines = _routes_as_text(text).splitlines()
        self.title = ""
        self.description = ""
        self.ops: list[EndpointDraft] = []
        self.base_urls: list[str] = []
        self.warnings: list[str] = []

    # -- section context ---------------------------------------------------
    def _front_matter(self) -> int:
        """Read a YAML front matter's title/description; the index of the first line after it."""
        lines = self.lines
        if not lines or lines[0].strip() != "---":
            return 0
        for j in range(1, min(len(lines), 200)):
            if lines[j].strip() == "---":
                for fm in lines[1:j]:
                    if fm.startswith("title:"):
                        self.title = fm[6:].strip().strip("'\"")
                    elif fm.startswith("description:"):
                        self.description = fm[12:].strip().strip("'\"")
                return j + 1
        return 0

    def run(self) -> None:
        lines = self.lines
        i = self._front_matter()
        sec = _Section()
        while i < len(lines):
            line = lines[i]
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            level = 0
            m = _HEADING.match(line)
            if m:
                level, htext = len(m.group(1)), m.group(2)
            elif (
                nxt.strip()
                and re.fullmatch(r"=+|-+", nxt.strip())
                and line.strip()
                and not line.startswith(("-", "*", "|"))
            ):
                level, htext = (1 if nxt.strip()[0] == "=" else 2), line.strip()
                i += 1
            if level:
                self._heading(level, htext, sec)
                i += 1
                continue
            fm = _FENCE.match(line)
            if fm:
                fence, lang = fm.group(1), fm.group(2).lower()
                body: list[str] = []
                i += 1
                while i < len(lines) and not lines[i].strip().startswith(fence[:3]):
                    body.append(lines[i])
                    i += 1
                i += 1
                self._code_block(lang, body, sec.ops, sec.heading, sec.anchor, sec.context)
                continue
            if line.lstrip().startswith("<!--"):  # e.g. <!-- START GET /x.json --> markers
                while i < len(lines) and "-->" not in lines[i]:
                    i += 1
                i += 1
                continue
            em = _AT_START.match(line)  # an endpoint line
            if em:
                op = self._new_op(em.group(1), em.group(2), sec.heading, sec.anchor, not sec.ops)
                prose = _strip_md(line[em.end() :]).strip(" -:→")
                if len(prose) > 3 and not prose.startswith(("[", "HTTP/")):
                    op.description.append(_strip_md(line).lstrip("-*+ "))
                link = re.search(r"\]\((#[\w-]+)\)", line)
                if link:
                    op.link = link.group(1)[1:]
                sec.ops.append(op)
                i += 1
                continue
            i = self._section_line(i, sec) if sec.ops else i + 1

    def _heading(self, level: int, htext: str, sec: _Section) -> None:
        am = _ANCHOR.search(htext)
        htext_clean = _strip_md(_ANCHOR.sub("", htext))
        ep = _ENDPOINT.search(htext)
        if level == 1 and not self.title:
            self.title = htext_clean
        if ep or level <= 3 and not self._is_label(htext_clean):
            sec.heading, sec.anchor = htext_clean, (am.group(1) if am else _slug(htext_clean))
            sec.ops = []
            sec.context = ""
            sec.pending_required = False
            if ep:
                sec.ops.append(self._new_op(ep.group(1), ep.group(2), sec.heading, sec.anchor, True))
                sec.heading = _strip_md(_ENDPOINT.sub("", htext_clean)).strip(" -:") or sec.heading
                sec.ops[-1].summary = sec.heading
            return
        sec.context = htext_clean.lower()
        sec.pending_required = "required" in sec.context and "optional" not in sec.context
        if sec.ops:
            st = _STATUS.search(htext_clean)
            if st:
                sec.ops[0].response_desc.setdefault(
                    st.group(1), _strip_md(_STATUS.sub("", htext_clean, 1)).strip(": ")
                )

    def _section_line(self, i: int, sec: _Section) -> int:
        """One line inside an endpoint's section (parameters, tables, statuses, prose); the next index."""
        lines = self.lines
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        op = sec.ops[0]
        low = _strip_md(line).lower()
        # "**Required parameters**: `content` for what ..." / "_Optional query parameters_:"
        label = re.match(
            r"^\s*(?:\*\*|_)?([A-Za-z ]*parameters?[A-Za-z ]*)(?:\*\*|_)?\s*:?\s*(?:\*\*|_)?\s*:?\s*(.*)$",
            line,
        )
        if label and "parameter" in label.group(1).lower() and len(label.group(1)) < 40:
            sec.context = label.group(1).lower()
            sec.pending_required = "required" in sec.context
            first = re.match(r"^`([A-Za-z_][\w.\[\]]*)`\s*(.*)$", label.group(2))
            if first:
                self._param(op, first.group(1), _strip_md(first.group(2)), sec.context, sec.pending_required)
            return i + 1
        pm = _BULLET_PARAM.match(line)
        if pm and not _ENDPOINT.search(line):
            self._param(
                op,
                pm.group(1),
                _strip_md(pm.group(3)),
                sec.context,
                sec.pending_required,
                hint=pm.group(2) or "",
            )
            return i + 1
        pm = _BULLET_PLAIN.match(line)
        if pm and sec.context and "param" in sec.context:
            self._param(op, pm.group(1), _strip_md(pm.group(2)), sec.context, sec.pending_required)
            return i + 1
        if _DEF_TERM.match(line.strip()) and nxt.startswith(": "):
            desc_lines = [nxt[2:]]
            j = i + 2
            while (
                j < len(lines)
                and lines[j].strip()
                and not lines[j].startswith(": ")
                and desc_lines[-1].rstrip().endswith("\\")
            ):
                desc_lines.append(lines[j])
                j += 1
            self._param(op, line.strip(), _strip_md(" ".join(desc_lines)), sec.context, False)
            return j
        if line.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            for row in _table_rows(block):
                self._table_param(op, row, sec.context)
            return i
        for st in re.findall(r"\b(?:return|returns|respond|responds)\b[^.]*?`?\b([1-5]\d\d)\b", line, re.I):
            if st not in op.statuses:
                op.statuses.append(st)
        if (
            line.strip()
            and not op.description
            and not line.lstrip().startswith(("*", "-", "|", "#"))
            and "example" not in low
        ):
            op.description.append(_strip_md(line))
        return i + 1

    @staticmethod
    def _is_label(text: str) -> bool:
        low = text.lower()
        # whole label headings only ("Returns", "Example response"), not "Return a book"
        return (
            bool(
                re.match(
                    r"^(examples?|request|response|parameters?|headers?|query|path|form|body|returns?|"
                    r"copy as|sample|http|attributes?|\d{3})(\s+(example|examples|body|parameters?|response|request|"
                    r"fields?|schema|json|attributes?|status|codes?))*\s*:?$",
                    low,
                )
            )
            or bool(re.match(r"^(example|sample) (request|response)", low))
            or "parameters" in low
        )

    def _new_op(self, method: str, path: str, summary: str, anchor: str, primary: bool) -> EndpointDraft:
        op = EndpointDraft(
            method=method.lower(), raw_path=path, summary=summary, anchor=anchor, primary=primary
        )
        self.ops.append(op)
        return op

    def _location(self, op: EndpointDraft, name: str, context: str) -> str:
        path, _ = normalize_path(op.raw_path)
        if "{" + name.lstrip(":") + "}" in path or name.startswith(":") or "path" in context:
            return "path"
        if "header" in context or name.lower() in _HEADERS or name.lower().startswith("x-"):
            return "header"
        if "query" in context:
            return "query"
        if "form" in context or "body" in context or "request" in context and "param" not in context:
            return "body"
        return "body" if op.method in _WRITE else "query"

    def _param(
        self, op: EndpointDraft, name: str, desc: str, context: str, required: bool, hint: str = ""
    ) -> None:
        loc = self._location(op, name, context)
        name = name.lstrip(":")
        if "(required)" in desc:
            required = True
            desc = desc.replace("(required)", "").strip()
        if "optional" in context:
            required = False
        schema, rest = _type_of(desc)
        if not schema and hint:
            schema, _ = _type_of(hint.split(",")[0].strip() + ".")
            required = required or "required" in hint.lower()
        if not schema:
            schema = _guess_schema(name, desc)
        key = (name, loc)
        if key not in op.params:
            op.params[key] = Parameter(
                name=name,
                location=loc,
                description=rest.strip() or desc,  # type: ignore[arg-type]
                required=required or loc == "path",
                schema=schema,
            )

    def _table_param(self, op: EndpointDraft, row: dict[str, str], context: str) -> None:
        name = next(
            (
                row[k]
                for k in (
                    "name",
                    "parameter",
                    "param",
                    "field",
                    "attribute",
                    "argument",
                    "key",
                    "attribute name",
                    "parameter name",
                    "field name",
                )
                if row.get(k)
            ),
            "",
        )
        name = name.split()[0] if name else ""
        if not re.fullmatch(r":?[A-Za-z_][\w.\[\]-]*", name):
            return
        desc = row.get("description", "")
        typ = row.get("type", "")
        req = row.get("required", "")
        loc_word = row.get("in", row.get("location", ""))
        ctx = context + (" " + loc_word.lower() if loc_word else "")
        required = req.lower() in ("yes", "true", "required", "y", "✓", "x") or "required" in typ.lower()
        hint = typ.replace("required", "").replace(",", "").strip()
        self._param(op, name, desc, ctx, required, hint=hint)

    def _code_block(
        self,
        lang: str,
        body: list[str],
        section_ops: list[EndpointDraft],
        heading: str,
        anchor: str,
        context: str,
    ) -> None:
        first = next((b for b in body if b.strip()), "")
        em = _AT_START.match(first)
        if em and lang not in ("json", "javascript", "js"):
            is_new = not section_ops
            op = self._new_op(em.group(1), em.group(2), heading, anchor, is_new)
            section_ops.append(op)
            return
        if lang in ("shell", "sh", "bash", "curl", "console") or "curl " in first:
            for url in re.findall(r"https?://[^\s'\"\\]+", "\n".join(body)):
                self.base_urls.append(url)
            return
        if lang not in ("", "json", "javascript", "js", "json5", "jsonc") or not section_ops:
            return
        value = _parse_json_block("\n".join(body))
        if value is _NOPE:
            return
        op = section_ops[0]
        if "request" in context and "response" not in context:
            op.request_examples.append(value)
            return
        st = _STATUS.search(context)
        status = st.group(1) if st else None
        if status is None:
            status = next((s for s in op.statuses if s.startswith("2")), "200")
        op.responses.setdefault(status, []).append(value)

    # -- build -------------------------------------------------------------
    def build(self, fmt: Literal["markdown", "html"]) -> ApiDoc:
        out = operations(self.ops)
        base = base_url(self.base_urls, self.ops)
        return ApiDoc(
            title=self.title or self.source.rsplit("/", 1)[-1],
            description=self.description,
            source=self.source,
            format=fmt,
            base_url=base,
            operations=out,
            warnings=self.warnings,
        )


def read_markdown(text: str, source: str, *, format: Literal["markdown", "html"] = "markdown") -> ApiDoc:
    """Parse a Markdown API reference into an ApiDoc.

    Raises IngestError when the text documents no endpoint (``METHOD /path``).
    """
    p = _Parser(text, source)
    p.run()
    if not p.ops:
        what = "HTML page" if format == "html" else "Markdown document"
        raise IngestError(f"{source}: not an API reference ({what} with no 'METHOD /path' endpoint)")
    return p.build(format)

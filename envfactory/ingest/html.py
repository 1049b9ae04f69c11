"""Reader for HTML API reference pages.

The page is flattened into the Markdown shapes the Markdown reader understands
(headings, fenced code, bullets with code spans, ``name`` / ``: description``
definition lists, pipe tables), so both formats share one set of rules.
"""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag

from envfactory.errors import IngestError
from envfactory.ingest.model import ApiDoc

__all__ = ["read_html", "html_to_markdown"]

_SKIP = {"script", "style", "noscript", "svg", "nav", "footer", "template", "head", "iframe", "form"}
_BLOCKS = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "aside",
    "blockquote",
    "body",
    "html",
    "details",
    "summary",
    "figure",
    "span",
}


def _permalink(node: Tag) -> bool:
    """A heading's own link mark (Sphinx ``<a class="headerlink" title="Permalink to this
    heading">¶</a>``): a page decoration, not text (it had left ``GET /v1/containers¶`` in paths)."""
    if node.name != "a":
        return False
    classes = {str(c).lower() for c in node.get("class") or []}
    title = str(node.get("title") or "").lower()
    return bool(classes & {"headerlink", "anchor", "anchorjs-link", "permalink"}) or title.startswith(
        "permalink"
    )


def _inline(node: Any) -> str:
    """Text of an inline run, with <code> as `code` and whitespace collapsed."""
    if isinstance(node, NavigableString):
        return str(node)
    if not isinstance(node, Tag) or node.name in _SKIP or _permalink(node):
        return ""
    if node.name == "code" or node.name == "kbd":
        text = node.get_text()
        return f"`{' '.join(text.split())}`" if text.strip() else ""
    if node.name == "br":
        return "\n"
    return "".join(_inline(c) for c in node.children)


def _clean(text: str) -> str:
    return " ".join(text.replace("\xa0", " ").split())


def _code_lang(pre: Tag) -> str:
    for el in (pre.find("code"), pre):
        if isinstance(el, Tag):
            for cls in el.get("class") or []:
                for prefix in ("language-", "lang-", "highlight-"):
                    if cls.startswith(prefix):
                        return cls[len(prefix) :].lower()
                if cls.lower() in ("json", "http", "shell", "bash", "yaml"):
                    return cls.lower()
    return ""


def _table(table: Tag) -> list[str]:
    rows = []
    for tr in table.find_all("tr"):
        cells = [_clean(_inline(c)).replace("|", "/") for c in tr.find_all(["th", "td"])]
        if cells:
            rows.append(cells)
    if len(rows) < 2:
        return []
    width = max(len(r) for r in rows)
    out = ["| " + " | ".join(rows[0] + [""] * (width - len(rows[0]))) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows[1:]]
    return out


def _emit(node: Any, out: list[str]) -> None:
    if isinstance(node, NavigableString):
        text = _clean(str(node))
        if text:
            out.append(text)
        return
    if not isinstance(node, Tag) or node.name in _SKIP or _permalink(node):
        return
    name = node.name
    if name in ("h1", "h2", "h3", "h4", "h5", "h6"):
        out += ["", "#" * int(name[1]) + " " + _clean(_inline(node)), ""]
    elif name == "pre":
        out += ["", "```" + _code_lang(node), *node.get_text().strip("\n").splitlines(), "```", ""]
    elif name in ("ul", "ol"):
        for li in node.find_all("li", recursive=False):
            nested = [c for c in li.children if isinstance(c, Tag) and c.name in ("ul", "ol", "pre", "table")]
            text = _clean("".join(_inline(c) for c in li.children if c not in nested))
            out.append(f"- {text}")
            for c in nested:
                _emit(c, out)
        out.append("")
    elif name == "dl":
        for child in node.children:
            if isinstance(child, Tag) and child.name == "dt":
                out.append(_clean(_inline(child)).strip("`"))
            elif isinstance(child, Tag) and child.name == "dd":
                out += [": " + _clean(_inline(child)), ""]
    elif name == "table":
        out += ["", *_table(node), ""]
    elif name == "p" or name in ("td", "th", "li", "dt", "dd"):
        text = _inline(node)
        for line in text.split("\n"):
            if _clean(line):
                out.append(_clean(line))
        out.append("")
    elif name == "code":  # a lone <code> block outside <pre>
        out.append(_clean(_inline(node)))
    else:
        if any(
            isinstance(c, Tag)
            and c.name
            not in ("a", "b", "strong", "em", "i", "code", "span", "br", "small", "sup", "sub", "kbd")
            for c in node.children
        ):
            for child in node.children:
                _emit(child, out)
        else:
            text = _inline(node)
            for line in text.split("\n"):
                if _clean(line):
                    out.append(_clean(line))
            if name in _BLOCKS:
                out.append("")


def html_to_markdown(html: str) -> tuple[str, str]:
    """(title, markdown text) of an HTML page."""
    soup = BeautifulSoup(html, "html.parser")
    title = ""
    if soup.title and soup.title.string:
        title = _clean(soup.title.string)
    body = soup.body or soup
    out: list[str] = []
    for c in body.children:
        _emit(c, out)
    return title, "\n".join(out)


def read_html(text: str, source: str) -> ApiDoc:
    """Parse an HTML API reference page into an ApiDoc.

    Raises IngestError naming the page when it documents no ``METHOD /path`` endpoint
    (a landing page, a blog post, a JavaScript-rendered shell).
    """
    from envfactory.ingest.markdown import read_markdown

    try:
        title, md = html_to_markdown(text)
    except (ValueError, AssertionError, RecursionError) as e:
        raise IngestError(f"{source}: unparsable HTML ({e})") from e
    api = read_markdown(md, source, format="html")
    if title and (not api.title or api.title == source.rsplit("/", 1)[-1]):
        api = api.model_copy(update={"title": title})
    return api

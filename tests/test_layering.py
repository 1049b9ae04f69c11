"""The package imports downward only (DESIGN.md, "Layers").

Every ``import``/``from ... import`` in ``envfactory/`` (relative or absolute, at module level or
inside a function, type-checking-only imports included) is an edge from the importing module's
subpackage to the imported one's. An edge is allowed when the target is the importer itself or
lies below it in ``ALLOWED`` (transitively). The test fails on any other edge (an upward or
sideways import) and on any cycle between subpackages.

Run ``python tests/test_layering.py`` to print the subpackage graph's offending edges.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "envfactory"

# Each subpackage (or top-level module) and what it may import directly; what those may import,
# it may import too. The table is DESIGN.md's layering diagram:
#   errors, config, text (and _version, bfcl_data: leaves with no envfactory imports)  ->  spec  ->  ingest -> explore
#   spec -> runtime -> verify · serve · graph · reward
#   llm: a service every layer above spec may import
#   synth · evaluation · export over those (synth and evaluation never import each other)
#   rl -> pipelines -> cli / bench (and the top-level facade ``envfactory/__init__``)
ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "errors": set(),
    "config": {"errors"},
    "text": {"errors"},
    "bfcl_data": set(),  # where BFCL's published data lives (read by evaluation and synth)
    "spec": {"errors", "config", "text", "_version", "bfcl_data"},
    "ingest": {"spec", "llm"},
    "explore": {"ingest", "spec", "llm"},  # DESIGN: explore imports spec and ingest (llm: a service)
    "runtime": {"spec", "llm"},
    "llm": {"errors", "config", "text"},
    "verify": {"runtime", "llm"},
    "serve": {"runtime", "llm", "reward"},  # the control channel scores sessions (POST .../reward)
    "graph": {"runtime", "llm"},
    "reward": {"runtime", "llm"},
    "synth": {"verify", "serve", "graph", "reward", "llm"},
    "evaluation": {"verify", "serve", "graph", "reward", "llm"},
    "export": {"verify", "serve", "graph", "reward", "llm"},
    "audit": {"synth", "export"},  # measured meaning: seed audits (runtime) and dataset audits (synth)
    "rl": {"synth", "evaluation", "export"},
    "pipelines": {"rl", "audit", "explore", "synth", "evaluation", "export"},
    "bench": {"pipelines"},
    "cli": {"pipelines", "bench"},  # ``envfactory bench`` is a CLI verb over bench
    "__root__": {"cli", "bench"},  # envfactory/__init__.py and __main__.py: the public facade
}


def closure(allowed: dict[str, set[str]]) -> dict[str, set[str]]:
    """Everything each layer may import, directly or through the layers below it."""
    out: dict[str, set[str]] = {}

    def reach(name: str, stack: tuple[str, ...] = ()) -> set[str]:
        if name in out:
            return out[name]
        assert name not in stack, f"the layer table itself has a cycle: {' -> '.join((*stack, name))}"
        got: set[str] = set()
        for dep in allowed[name]:
            got |= {dep} | reach(dep, (*stack, name))
        out[name] = got
        return got

    for name in allowed:
        reach(name)
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def subpackage(module: str) -> str:
    """``envfactory.verify.levels`` -> ``verify``; ``envfactory.reward`` -> ``reward``;
    the package root (``envfactory``, ``envfactory.__main__``) -> ``__root__``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "__root__"
    return parts[1]


def _is_module(dotted: str) -> bool:
    p = PACKAGE.parent.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def imports_of(path: Path) -> list[tuple[str, int]]:
    """The envfactory modules ``path`` imports, with line numbers."""
    module = _module_name(path)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "envfactory"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "envfactory":
                continue
            # ``from envfactory import cli`` imports the subpackage, not the root facade
            subs = [f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")]
            out += [(s, node.lineno) for s in subs] or [(target, node.lineno)]
    return out


def import_edges() -> dict[tuple[str, str], list[str]]:
    """(importer subpackage, imported subpackage) -> where (``path:line``), across packages only."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        src = subpackage(_module_name(path))
        for target, line in imports_of(path):
            dst = subpackage(target)
            if dst != src:
                edges[(src, dst)].append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    return edges


def back_edges(edges: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    """The edges the layer table does not allow (upward or sideways imports, unknown packages)."""
    may = closure(ALLOWED)
    return {e: w for e, w in sorted(edges.items()) if e[0] not in may or e[1] not in may[e[0]]}


def cycles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one subpackage (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(bad: dict[tuple[str, str], list[str]]) -> str:
    return "\n".join(f"{a} -> {b}: {', '.join(w)}" for (a, b), w in bad.items())


# ---- tests -----------------------------------------------------------------------------------


def test_every_subpackage_is_in_the_layer_table():
    found = {subpackage(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert found - set(ALLOWED) == set(), "add the new subpackage to ALLOWED (and DESIGN.md's layers)"


def test_imports_go_downward_only():
    bad = back_edges(import_edges())
    assert not bad, "upward or sideways imports:\n" + describe(bad)


def test_no_cycle_between_subpackages():
    assert cycles(import_edges()) == []


def test_the_checker_sees_relative_absolute_and_function_level_imports(tmp_path, monkeypatch):
    # A fake package: spec imports runtime three ways; each is an upward edge the checker must see.
    pkg = tmp_path / "envfactory"
    for sub in ("spec", "runtime", "verify"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "spec" / "a.py").write_text("from ..runtime import x\n")
    (pkg / "spec" / "b.py").write_text("import envfactory.runtime.session\n")
    (pkg / "spec" / "c.py").write_text("def f():\n    from envfactory import verify\n")
    (pkg / "verify" / "d.py").write_text("from ..spec import a\nfrom . import e\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    edges = import_edges()
    assert set(back_edges(edges)) == {("spec", "runtime"), ("spec", "verify")}
    assert ("verify", "spec") in edges and ("verify", "verify") not in edges
    assert cycles(edges) == [["spec", "verify"]]


if __name__ == "__main__":
    all_edges = import_edges()
    print(describe(back_edges(all_edges)) or "no back-edges")
    print("cycles:", cycles(all_edges) or "none")

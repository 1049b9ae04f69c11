"""One error tree: every exception class users can meet lives in envfactory/errors.py, drawn in its docstring."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import envfactory.errors as errors

PACKAGE = Path(errors.__file__).parent

# Public exception classes still defined elsewhere, each with the change that moves it. Keep it empty.
NOT_YET_MOVED: set[tuple[str, str]] = set()


def _drawn_tree(doc: str) -> dict[str, str]:
    """{class name: the class it is drawn under} from the box-drawing tree in a docstring."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        m = re.match(r"^(\s*[│├└─ ]*)([A-Z]\w*Error)\b", line)
        if not m:
            continue
        depth, name = len(m.group(1)), m.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


def test_every_error_is_an_envfactory_error_drawn_under_its_parent():
    drawn = _drawn_tree(errors.__doc__ or "")
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert inspect.isclass(cls) and issubclass(cls, errors.EnvFactoryError), name
        if name != "EnvFactoryError":
            assert drawn.get(name) == cls.__mro__[1].__name__, (
                f"errors.py's tree draws {name} under {drawn.get(name)}"
            )
    assert set(drawn) == set(errors.__all__) - {"EnvFactoryError"}


def test_no_public_exception_class_outside_errors_py():
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    found.add((rel, node.name))
    assert found == NOT_YET_MOVED, "exception classes belong in envfactory/errors.py (under EnvFactoryError)"

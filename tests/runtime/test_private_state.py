"""The runtime owns its state: no module outside ``envfactory/runtime`` reads or overrides the
hash internals or compiled entities; they use ``Environment``'s public calls instead."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from envfactory.errors import ConstraintError, NotFoundError
from envfactory.runtime import Environment

PACKAGE = Path(__file__).resolve().parents[2] / "envfactory"
PRIVATE = {"_MOD", "_row_digest", "_template_sums", "_template_seq", "_scan", "_entities"}


def _private_uses(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Attribute):
            names = [node.attr]  # env._entities, base._template_sums
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            names = [a.name.rsplit(".", 1)[-1] for a in node.names]  # from ..runtime.session import _MOD
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]  # getattr(env, "_template_sums")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [node.name]  # a subclass overriding Environment._scan
        found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names if n in PRIVATE]
    return found


def test_no_module_outside_runtime_touches_runtime_internals():
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "runtime"]
    assert len(outside) > 50
    assert [u for p in outside for u in _private_uses(p)] == []


def test_the_scan_sees_an_attribute_an_import_a_getattr_and_an_override(tmp_path):
    src = tmp_path / "levels.py"
    src.write_text(
        "from ..runtime.session import _MOD\nx = env._entities\ny = getattr(env, '_template_seq')\n"
        "class M:\n    def _scan(self):\n        pass\n"
    )
    assert sorted(u.split(" ")[1] for u in _private_uses(src, tmp_path)) == [
        "_MOD",
        "_entities",
        "_scan",
        "_template_seq",
    ]


def test_snapshot_with_hashes_like_a_rescan_of_the_same_change(small_env):
    env = small_env
    with env.new_session() as s:
        (key, _), (other_key, other_email) = s.query(
            "SELECT customer_id, email FROM customer ORDER BY customer_id LIMIT 2"
        )
        s.conn.execute("UPDATE customer SET name = ? WHERE customer_id = ?", ("Changed Name", key))
        rescanned = env.snapshot_from_bytes(s.conn.serialize())
    snap = env.snapshot_with([("customer", key, "name", "Changed Name")])
    assert snap.sums == rescanned.sums
    with env.new_session(snap) as changed, env.new_session() as fresh:
        assert changed.get_row("customer", key)["name"] == "Changed Name"
        assert changed.state_hash() != fresh.state_hash()
        assert changed.state_hash() == env.new_session(rescanned).state_hash()
    with pytest.raises(NotFoundError):
        env.snapshot_with([("customer", "CU-none", "name", "x")])
    with pytest.raises(ConstraintError):  # email is unique
        env.snapshot_with([("customer", key, "email", other_email)])


def test_template_state_is_reused_only_for_the_same_template(small_env):
    again = Environment(small_env.spec, small_env.template, template_state=small_env.template_snapshot)
    with again.new_session() as a, small_env.new_session() as b:
        assert a.state_hash() == b.state_hash()
    with pytest.raises(ValueError):
        Environment(small_env.spec, small_env.template + b"x", template_state=small_env.template_snapshot)

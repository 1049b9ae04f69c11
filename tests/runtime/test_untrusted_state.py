"""Issue 17 #2: a state (control channel, --initial-state, task state file, template.db) is
untrusted SQLite: only the spec's own schema, intact, with values the runtime can return."""

from __future__ import annotations

import sqlite3

import pytest

from envfactory.errors import StateError
from envfactory.runtime import load_or_build_template


def _edit(data: bytes, *sql: str) -> bytes:
    """The state with some raw SQL applied (what an attacker's file would hold)."""
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.deserialize(data)
    for s in sql:
        c.execute(s)
    out = c.serialize()
    c.close()
    return out


def test_a_state_with_a_trigger_is_refused_and_runs_nothing(small_env):
    bad = _edit(
        small_env.template, 'CREATE TRIGGER wipe AFTER UPDATE ON customer BEGIN DELETE FROM "order"; END'
    )
    with pytest.raises(StateError, match="schema differs.*trigger wipe"):
        small_env.snapshot_from_bytes(bad)


def test_a_state_with_a_recursive_trigger_is_refused_before_any_call(small_env):
    bad = _edit(
        small_env.template,
        "CREATE TRIGGER loop AFTER UPDATE ON product BEGIN UPDATE product SET stock = stock + 1; END",
    )
    with pytest.raises(StateError, match="trigger loop"):
        small_env.snapshot_from_bytes(bad)


def test_a_state_with_a_view_or_an_extra_table_is_refused(small_env):
    for sql in (
        "CREATE VIEW v AS SELECT 1",
        "CREATE TABLE extra (x)",
        "CREATE INDEX ix_extra ON product (title)",
    ):
        with pytest.raises(StateError, match="schema differs"):
            small_env.snapshot_from_bytes(_edit(small_env.template, sql))


def test_a_state_with_a_dropped_column_is_refused(small_env):
    bad = _edit(small_env.template, "ALTER TABLE product DROP COLUMN tags")
    with pytest.raises(StateError, match="table product"):
        small_env.snapshot_from_bytes(bad)


def test_a_missing_column_is_an_error_not_its_own_name(small_env):
    # the runtime's identifier quoting: with "tags" SQLite would return the string 'tags'
    from envfactory.runtime.environment import _q

    c = sqlite3.connect(":memory:")
    c.deserialize(_edit(small_env.template, "ALTER TABLE product DROP COLUMN tags"))
    assert c.execute('SELECT "tags" FROM product LIMIT 1').fetchone() == ("tags",)  # the hazard
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        c.execute(f"SELECT {_q('tags')} FROM product LIMIT 1")
    c.close()


def test_damaged_or_foreign_bytes_are_a_state_error(small_env):
    data = bytearray(small_env.template)
    page = 4096
    data[2 * page + 100 : 3 * page] = b"\xff" * (page - 100)
    for bad in (bytes(data), b"not a database", b"SQLite format 3\x00" + b"\x00" * 50):
        with pytest.raises(StateError):
            small_env.snapshot_from_bytes(bad)


def test_rows_that_point_nowhere_or_cannot_be_returned_are_refused(small_env):
    cases = {
        "reference": "UPDATE \"order\" SET customer_id = 'CU99999' WHERE rowid = 1",
        "infinite": "UPDATE product SET price = 9e999 WHERE rowid = 1",
        "invalid JSON": "UPDATE product SET tags = '{not json' WHERE rowid = 1",
        "blob": "UPDATE customer SET name = x'00ff' WHERE rowid = 1",
        "counter": "UPDATE _envfactory_seq SET next = 'x'",
    }
    for what, sql in cases.items():
        with pytest.raises(StateError):
            small_env.snapshot_from_bytes(_edit(small_env.template, sql))
        assert what


def test_the_hash_of_a_state_comes_from_its_rows(small_env):
    s = small_env.new_session()
    s.call("update_customer", {"customer_id": "CU00001", "email": "x@example.com"})
    # whatever a file says about itself, the snapshot's hash is the rows'
    data = _edit(s.snapshot().data, "UPDATE _envfactory_meta SET value = 'forged'")
    snap = small_env.snapshot_from_bytes(data)
    assert small_env.new_session(snap).state_hash() == s.state_hash()


def test_the_check_is_bounded_in_time(trip_desk_env):
    from envfactory.runtime.state import open_state

    # a deadline already past: the progress handler stops the check at its first tick
    with pytest.raises(StateError, match="took longer than"):
        # bytes never checked before (a state that passed once is not checked again)
        open_state(
            trip_desk_env.spec,
            _edit(trip_desk_env.template, "UPDATE flight SET price = price + 1"),
            timeout_s=-1.0,
        )


def test_served_state_paths_go_through_the_same_check(small_env):
    from envfactory.serve.state import load_state_bytes

    bad = _edit(small_env.template, "CREATE TRIGGER t AFTER INSERT ON customer BEGIN SELECT 1; END")
    with pytest.raises(StateError, match="schema differs"):
        load_state_bytes(small_env, bad)


def test_a_tampered_template_cache_is_rebuilt(small_spec, tmp_path):
    cache = tmp_path / "template.db"
    good = load_or_build_template(small_spec, cache)
    cache.write_bytes(_edit(good, "CREATE TRIGGER t AFTER UPDATE ON customer BEGIN DELETE FROM product; END"))
    assert load_or_build_template(small_spec, cache) == good
    assert cache.read_bytes() == good


def test_session_connections_carry_limits(small_env):
    s = small_env.new_session()
    assert s.conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED) == 0
    assert s.conn.getlimit(sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH) == 1

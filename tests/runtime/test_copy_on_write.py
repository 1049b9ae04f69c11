"""Issue 17 #8: a session copies its state only when it first writes; until then it reads a
connection its environment shares. Hash, diff, snapshot and atomicity stay exactly as for a
session that copied at once."""

from __future__ import annotations

import threading

import pytest

from envfactory.errors import PreconditionError


def test_idle_and_reading_sessions_hold_no_copy(small_env):
    sessions = [small_env.new_session() for _ in range(10_000)]
    for s in sessions[:100]:
        s.call("get_customer", {"customer_id": "CU00001"})
        s.call("search_products", {"max_price": 500.0})
        s.query("SELECT COUNT(*) FROM customer")
    assert not any(s.copied for s in sessions)
    h = small_env.template_snapshot
    assert {s.state_hash() for s in sessions[:100]} == {small_env.new_session().state_hash()}
    assert all(s.diff().empty for s in sessions[:100])
    for s in sessions:
        s.close()
    assert h.data is small_env.template


def test_a_first_write_copies_and_stays_private(small_env):
    a, b = small_env.new_session(), small_env.new_session()
    before = b.state_hash()
    a.call("update_customer", {"customer_id": "CU00001", "email": "new@example.com"})
    assert a.copied and not b.copied
    assert b.get_row("customer", "CU00001")["email"] != "new@example.com"
    assert a.get_row("customer", "CU00001")["email"] == "new@example.com"
    assert b.state_hash() == before != a.state_hash()
    assert small_env.new_session().get_row("customer", "CU00001")["email"] != "new@example.com"


def test_lazy_and_eager_sessions_agree_on_hash_diff_and_snapshot(small_env):
    lazy, eager = small_env.new_session(), small_env.new_session()
    eager.conn  # noqa: B018 - copy at once, as every session did before
    calls = [
        ("search_products", {"max_price": 100.0}),
        ("place_order", {"customer_id": "CU00002", "product_id": "PR00003", "quantity": 1}),
        ("update_customer", {"customer_id": "CU00002", "vip": True}),
    ]
    for tool, args in calls:
        assert lazy.try_call(tool, args) == eager.try_call(tool, args)
        assert lazy.state_hash() == eager.state_hash()
    assert lazy.diff().to_dict() == eager.diff().to_dict()
    assert lazy.snapshot().data == eager.snapshot().data


def test_a_failing_first_write_changes_nothing(small_env):
    s = small_env.new_session()
    before = s.state_hash()
    with pytest.raises(PreconditionError):
        s.call("place_order", {"customer_id": "CU00001", "product_id": "PR00001", "quantity": 10_000})
    assert s.state_hash() == before and s.diff().empty


def test_an_untouched_session_snapshots_the_state_it_started_from(small_env):
    s = small_env.new_session()
    s.call("update_customer", {"customer_id": "CU00003", "vip": True})
    snap = s.snapshot()
    t = small_env.new_session(snap)
    assert not t.copied
    assert t.state_hash() == s.state_hash() and t.get_row("customer", "CU00003")["vip"] is True
    assert small_env.new_session(t.snapshot()).state_hash() == s.state_hash()


def test_sessions_read_from_several_threads(small_env):
    sessions = [small_env.new_session() for _ in range(8)]
    out: list[int] = []

    def work(s):
        for _ in range(50):
            out.append(s.call("search_products", {"limit": 3})["count"])

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert out == [3] * 400


def test_query_stays_read_only_before_and_after_the_copy(small_env):
    s = small_env.new_session()
    with pytest.raises(ValueError, match="read-only"):
        s.query("WITH x AS (SELECT 1) DELETE FROM customer")
    s.call("update_customer", {"customer_id": "CU00001", "vip": True})
    with pytest.raises(ValueError, match="read-only"):
        s.query("WITH x AS (SELECT 1) DELETE FROM customer")
    assert s.query("SELECT COUNT(*) FROM customer") == [(30,)]


def test_a_closed_session_reads_nothing(small_env):
    s = small_env.new_session()
    s.close()
    with pytest.raises(Exception, match="closed"):
        s.get_row("customer", "CU00001")


def test_ten_thousand_idle_sessions_fit_in_far_less_than_a_copy_each(tmp_path):
    # 10,000 sessions of the 14,020-row reference: ~18 GB as full copies (1.8 MB each); run under
    # a 1.5 GiB address-space limit so the old behaviour fails instead of filling the machine
    import subprocess
    import sys
    import textwrap

    from ..conftest import REPO, TRIP_DESK

    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({1536 << 20}, {1536 << 20}))
        from envfactory.runtime import load_environment
        env = load_environment({str(TRIP_DESK)!r})
        sessions = [env.new_session() for _ in range(10_000)]
        for i, s in enumerate(sessions):
            s.call("get_flight", {{"flight_id": f"FL{{i % 500 + 1:05d}}"}})
        print("ok", len(sessions), len({{s.state_hash() for s in sessions}}))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["ok", "10000", "1"]

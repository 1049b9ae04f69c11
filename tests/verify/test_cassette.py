import json

from envfactory.runtime import Environment, Session
from envfactory.verify import (
    check_doc_examples,
    check_l1,
    check_l2,
    load_cassette,
    record_cassette,
    replay_cassette,
    replay_cassettes,
    save_cassette,
)
from envfactory.verify.mutants import Mutant, MutantEnvironment

from ._tiny import tiny_dict, tiny_env, tool_index


def test_record_save_load_and_replay_round_trip(tmp_path):
    env = tiny_env()
    cas = record_cassette(env, seed=1, sequences=3, steps=10)
    assert len(cas.sequences) == 3 and all(len(s) == 10 for s in cas.sequences)
    p = save_cassette(cas, tmp_path)
    assert p.stat().st_size < 100_000
    again = record_cassette(env, seed=1, sequences=3, steps=10)
    assert again.to_dict() == load_cassette(p).to_dict()  # deterministic for a seed
    assert all(c.ok for c in replay_cassettes(env, tmp_path))


def test_replay_detects_a_changed_response_and_a_changed_state(tmp_path):
    env = tiny_env()
    cas = record_cassette(env, seed=2)
    save_cassette(cas, tmp_path)
    d = json.loads((tmp_path / "tiny_shop.json").read_text())
    step = next(st for seq in d["sequences"] for st in seq if st["response"].get("ok"))
    step["response"]["result"] = {"tampered": True}
    (tmp_path / "tiny_shop.json").write_text(json.dumps(d))
    bad = [c for c in replay_cassettes(env, tmp_path) if not c.ok]
    assert bad and "response differs" in bad[0].message

    d = cas.to_dict()
    step = next(st for seq in d["sequences"] for st in seq)
    step["hash"] = "0" * 64
    (tmp_path / "tiny_shop.json").write_text(json.dumps(d))
    bad = [c for c in replay_cassettes(env, tmp_path) if not c.ok]
    assert bad and "state hash differs" in bad[0].message


def test_replay_detects_a_runtime_that_drops_a_write():
    base = tiny_env()
    cas = record_cassette(base, seed=0)
    d = tiny_dict()
    tool_index(d, "place_order")["effects"].pop()  # stock not decremented
    from envfactory.spec import parse_spec

    m = MutantEnvironment(base, Mutant("drop", "test", ["place_order"], parse_spec(d)))
    bad = [c for c in replay_cassette(m, cas) if not c.ok]
    assert bad and "state hash differs" in bad[0].message


class _DriftSession(Session):
    """Correct for a few writes, then returns a wrong total: only long rollouts see it."""

    def call(self, tool, args=None):
        out = super().call(tool, args)
        if self.env.spec.tool(tool).writes:
            self.writes = getattr(self, "writes", 0) + 1
            if self.writes > 3 and "total" in out:
                out = {**out, "total": out["total"] + 1}
        return out


class _DriftEnv(Environment):
    def new_session(self, snapshot=None):
        return _DriftSession(self, snapshot)


def test_l3_catches_drift_in_long_rollouts_that_l1_and_l2_miss():
    base = tiny_env()
    cas = record_cassette(base, seed=0)
    drift = _DriftEnv(base.spec, base.template)
    assert all(c.ok for c in check_l1(drift))
    assert all(c.ok for c in check_l2(drift))
    assert any(not c.ok for c in replay_cassette(drift, cas))


class _SharedCounterEnv(Environment):
    """Leaks state between sessions: every session's n-th get returns a different name."""

    calls = 0

    def new_session(self, snapshot=None):
        env = self

        class S(Session):
            def call(self, tool, args=None):
                out = super().call(tool, args)
                if tool == "get_item":
                    type(env).calls += 1
                    out = {**out, "name": f"{out['name']}#{type(env).calls}"}
                return out

        return S(self, snapshot)


def test_replay_requires_two_independent_sessions_to_agree():
    base = tiny_env()
    cas = record_cassette(base, seed=0, sequences=5, steps=20)
    assert any(st["tool"] == "get_item" for seq in cas.sequences for st in seq)
    leaky = _SharedCounterEnv(base.spec, base.template)
    bad = [c for c in replay_cassette(leaky, cas) if not c.ok]
    assert bad and "two independent sessions disagree" in bad[0].message


def test_doc_examples_are_replayed_and_validated():
    env = tiny_env()
    with env.new_session() as s:
        key = s.query('SELECT item_id FROM "item" LIMIT 1')[0][0]
    good = ("get_item", {"item_id": key}, {"type": "object", "required": ["item_id", "price"]})
    wrong = ("get_item", {"item_id": key}, {"type": "object", "required": ["colour"]})
    failing = ("get_item", {"item_id": "nope"}, None)
    out = check_doc_examples(env, [good, wrong, failing])
    assert [c.ok for c in out] == [True, False, False]
    assert check_doc_examples(env, []) == []

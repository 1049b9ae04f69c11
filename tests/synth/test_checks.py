from __future__ import annotations

import json
from pathlib import Path

import pytest

from envfactory.graph import run_sampling
from envfactory.reward import score_trajectory
from envfactory.runtime import load_environment
from envfactory.spec import Difficulty
from envfactory.synth.checks import (
    check_complete,
    check_decontaminated,
    check_not_overspecified,
    check_not_presatisfied,
    check_solvable,
    run_checks,
)
from envfactory.synth.decontam import build_ngram_index, load_benchmark_index
from envfactory.synth.realize import realize_goal
from envfactory.synth.tasks import task_from_gold

ROOT = Path(__file__).resolve().parents[2]
ENV_DIRS = sorted(p.parent for p in (ROOT / "domains").rglob("env.yaml"))

# Real BFCL questions (BFCL_v4_simple_python.json, multi_turn_base), as fixture text for when
# the bfcl-eval data is not installed.
BFCL_FIXTURE = [
    "Find the area of a triangle with a base of 10 units and height of 5 units.",
    "Calculate the factorial of 5 using math functions.",
    "Move 'final_report.pdf' within document directory to 'temp' directory in document. Make sure to create the directory",
    "Perform a detailed search using grep to identify sections in the file pertaining to 'budget analysis'.",
]


@pytest.fixture(scope="module")
def env():
    return load_environment(ROOT / "domains" / "travel" / "trip_desk")


@pytest.fixture(scope="module")
def tasks(env):
    out = []
    for g in run_sampling([env], 80, seed=5).kept:
        z = realize_goal(env.spec, g, seed=1)
        t = task_from_gold(
            env, g, z, task_id=f"t{len(out)}", seed=1, difficulty=Difficulty(predicted_pass_rate=0.5)
        )
        if all(f.ok for f in run_checks(t, env, None)):
            out.append(t)
    assert len(out) > 30
    return out


def _first(tasks, pred):
    return next(t for t in tasks if pred(t))


def test_clean_tasks_pass_every_check(env, tasks):
    for t in tasks[:10]:
        assert [
            f.check for f in run_checks(t, env, build_ngram_index({"bfcl": BFCL_FIXTURE})) if not f.ok
        ] == []


def test_leaked_id_is_caught(env, tasks):
    t = _first(tasks, lambda t: any(g.role == "discover" and "items" in (g.output or {}) for g in t.gold))
    row = next(g.output["items"][0] for g in t.gold if g.role == "discover" and (g.output or {}).get("items"))
    pk = next(v for k, v in row.items() if k.endswith("_id") or k == "code")
    bad = t.model_copy(update={"goal": t.goal + f" It is {pk}."})
    f = check_not_overspecified(bad, env.spec)
    assert not f.ok and "id" in f.message and pk in f.message


def test_tool_name_in_goal_is_caught(env, tasks):
    bad = tasks[0].model_copy(update={"goal": "Use search_flights to " + tasks[0].goal})
    f = check_not_overspecified(bad, env.spec)
    assert not f.ok and "search_flights" in f.message


def test_step_list_is_caught(env, tasks):
    bad = tasks[0].model_copy(update={"goal": "First find the traveller, then cancel the booking."})
    assert not check_not_overspecified(bad, env.spec).ok


def test_copied_tool_description_is_caught(env, tasks):
    desc = env.spec.tool("search_flights").description
    assert not check_not_overspecified(tasks[0].model_copy(update={"goal": desc}), env.spec).ok


def test_missing_fact_is_caught(env, tasks):
    t = _first(
        tasks,
        lambda t: any(
            k.startswith(("create_", "update_", "assign_", "reserve_", "pay_"))
            for k in {**t.persona.known_facts, **t.persona.hidden_facts}
        ),
    )
    key = next(
        k
        for k in {**t.persona.known_facts, **t.persona.hidden_facts}
        if k.startswith(("create_", "update_", "assign_", "reserve_", "pay_"))
    )
    value = {**t.persona.known_facts, **t.persona.hidden_facts}[key]
    persona = t.persona.model_copy(
        update={
            "known_facts": {k: v for k, v in t.persona.known_facts.items() if k != key},
            "hidden_facts": {k: v for k, v in t.persona.hidden_facts.items() if k != key},
        }
    )
    bad = t.model_copy(update={"persona": persona, "goal": "Please sort it out for me."})
    f = check_complete(bad, env.spec)
    assert not f.ok and str(value) in f.message


def test_unpinned_selection_is_caught(env, tasks):
    t = _first(
        tasks,
        lambda t: any(
            len((g.output or {}).get("items") or []) > 1
            and any(
                r and r[0] == i and r[1] == "items"
                for c in t.reward.gold_calls
                for r in (c.get("refs") or {}).values()
            )
            for i, g in enumerate(t.gold)
        ),
    )
    persona = t.persona.model_copy(update={"known_facts": {}, "hidden_facts": {}})
    f = check_complete(t.model_copy(update={"persona": persona}), env.spec)
    assert not f.ok and "singles it out" in f.message


def test_presatisfied_goal_is_caught(env, tasks):
    t = _first(tasks, lambda t: not t.reward.changes_state)
    reward = t.reward.model_copy(update={"required_facts": []})
    assert not check_not_presatisfied(t.model_copy(update={"reward": reward, "answer_facts": []})).ok
    # and a write task whose gold state equals the initial state
    w = _first(tasks, lambda t: t.reward.changes_state)
    same = w.reward.model_copy(update={"gold_state_hash": w.reward.initial_state_hash, "required_facts": []})
    assert not check_not_presatisfied(w.model_copy(update={"reward": same})).ok


def test_unsolvable_gold_is_caught(env, tasks):
    w = _first(tasks, lambda t: t.reward.changes_state)
    reward = w.reward.model_copy(update={"gold_state_hash": "0" * 64})
    assert not check_solvable(w.model_copy(update={"reward": reward}), env).ok


def test_bfcl_question_is_caught_with_fixture_index(tasks):
    idx = build_ngram_index({"bfcl": BFCL_FIXTURE})
    bad = tasks[0].model_copy(update={"goal": "Hi! " + BFCL_FIXTURE[2]})
    f = check_decontaminated(bad, idx)
    assert not f.ok and "bfcl" in f.message
    assert check_decontaminated(tasks[0], idx).ok
    short = tasks[0].model_copy(update={"goal": BFCL_FIXTURE[1]})
    assert not check_decontaminated(short, idx).ok


def test_missing_index_degrades_clearly(tasks):
    f = check_decontaminated(tasks[0], None)
    assert f.ok and "bfcl index unavailable" in f.message


def test_bfcl_question_is_caught_with_real_data(tasks, tmp_path, monkeypatch):
    from envfactory.synth import decontam

    files = decontam._bfcl_files()
    if not files:
        pytest.skip("bfcl-eval data not installed (scripts/install_bfcl.sh)")
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    idx = load_benchmark_index()
    assert idx.counts["bfcl"] > 1000 and "bfcl" not in idx.unavailable
    q = json.loads(next(f for f in files if "live_simple" in f.name).read_text().splitlines()[3])
    text = q["question"][0][0]["content"]
    bad = tasks[0].model_copy(update={"goal": text})
    assert not check_decontaminated(bad, idx).ok
    assert check_decontaminated(tasks[0], idx).ok
    assert list(tmp_path.glob("decontam-*.json"))  # cached


def test_absent_sources_are_reported(tmp_path, monkeypatch):
    from envfactory.synth import decontam

    monkeypatch.setattr(decontam, "_bfcl_files", lambda: [])
    monkeypatch.setattr(decontam, "_tau2_files", lambda: [])
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    idx = load_benchmark_index()
    assert idx.sources == [] and "bfcl index unavailable" in idx.unavailable["bfcl"]


# --- reward sanity on every environment ---------------------------------------------------


def _run(env, calls):
    recs = []
    with env.new_session() as s:
        for tool, args in calls:
            ok = s.try_call(tool, args)["ok"]
            recs.append({"tool": tool, "args": args, "ok": ok, "writes": env.spec.tool(tool).writes})
        return s.state_hash(), s.diff().to_dict(), recs


@pytest.mark.parametrize("env_dir", ENV_DIRS, ids=[p.name for p in ENV_DIRS])
def test_reward_sanity_on_every_env(env_dir):
    env = load_environment(env_dir)
    golds = run_sampling([env], 60, seed=11).kept
    built = []
    for g in golds:
        z = realize_goal(env.spec, g, seed=0)
        built.append(
            task_from_gold(env, g, z, task_id="x", seed=0, difficulty=Difficulty(predicted_pass_rate=0.5))
        )
    writes = [t for t in built if t.reward.changes_state]
    assert writes, "no state-changing task sampled"
    for t in writes[:8]:
        gold_calls = [(g.tool, g.args) for g in t.gold]
        answer = " ".join(t.answer_facts)
        h, d, recs = _run(env, gold_calls)
        assert (
            score_trajectory(
                t.reward, final_state_hash=h, final_diff=d, calls=recs, final_answer=answer
            ).reward
            == 1.0
        )
        h, d, recs = _run(env, [])
        r0 = score_trajectory(t.reward, final_state_hash=h, final_diff=d, calls=recs, final_answer="")
        assert r0.reward == 0.0
        last_write = max(i for i, g in enumerate(t.gold) if env.spec.tool(g.tool).writes)
        h, d, recs = _run(env, [c for i, c in enumerate(gold_calls) if i != last_write])
        assert (
            score_trajectory(
                t.reward, final_state_hash=h, final_diff=d, calls=recs, final_answer=answer
            ).reward
            < 1
        )
    # an extra delete of something the gold run did not touch
    deletes = [tl for tl in env.spec.tools if tl.kind.value == "delete"]
    if deletes:
        tool = deletes[0]
        ent = env.spec.entity(tool.entity)
        with env.new_session() as s:
            keys = [r[0] for r in s.query(f'SELECT "{ent.primary_key}" FROM "{ent.name}"')]
        t = writes[0]
        gold_calls = [(g.tool, g.args) for g in t.gold]
        for k in keys:
            h, d, recs = _run(env, gold_calls + [(tool.name, {tool.key_param.name: k})])
            if recs[-1]["ok"]:
                r = score_trajectory(
                    t.reward,
                    final_state_hash=h,
                    final_diff=d,
                    calls=recs,
                    final_answer=" ".join(t.answer_facts),
                )
                assert r.reward < 1 and r.partial < 1
                break


def test_a_read_row_with_an_items_field_is_one_row_not_a_page(env, tasks):
    # a get whose row has its own ``items`` (strings: Google Calendar's events had one) is not a page
    t = _first(tasks, lambda t: any(env.spec.tool(g.tool).kind.value == "get" for g in t.gold))
    gold = [
        g.model_copy(update={"output": {**g.output, "items": ["standard", "basic"]}})
        if env.spec.tool(g.tool).kind.value == "get" and isinstance(g.output, dict)
        else g
        for g in t.gold
    ]
    assert check_not_overspecified(t.model_copy(update={"gold": gold}), env.spec).ok

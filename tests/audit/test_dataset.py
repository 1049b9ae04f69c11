"""``envfactory audit DATASET``: the dataset audit on a small synthesized dataset and on rows made
to carry each defect (so every counted defect is shown to be caught)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.audit.dataset import audit_rows, distinct_n, frame_of, is_dataset_dir, load_rows
from envfactory.pipelines import synthesize_dataset
from envfactory.runtime import load_environment

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    env = load_environment(ROOT / "domains" / "travel" / "trip_desk")
    out = tmp_path_factory.mktemp("ds") / "trip"
    synthesize_dataset([env], out, n=30, seed=1)
    return out


def test_a_synthesized_dataset_holds_the_invariants(dataset):
    assert is_dataset_dir(dataset)
    rows = load_rows(dataset)
    a = audit_rows(rows, ROOT)
    assert a.rows == len(rows) >= 25 and not a.skipped
    for k in (
        "invented_args",
        "goal_mismatch",
        "ids_in_goal",
        "asks_for_id",
        "double_greeting",
        "answer_handed_over",
    ):
        assert a.rates[k] == 0.0, (k, a.examples.get(k))
    assert a.rates["unused_calls"] <= 0.02
    assert "## Audit" in (dataset / "README.md").read_text(encoding="utf-8")  # the card carries the table


def test_each_defect_is_caught_on_a_row_that_has_it(dataset):
    rows = load_rows(dataset)
    row = next(r for r in rows if r["reward_spec"]["required_facts"] and len(r["user"]["subgoals"]) >= 1)
    bad = copy.deepcopy(row)
    first = next(m for m in bad["messages"] if m["role"] == "user")
    first["content"] = "Hello! Hi, " + first["content"] + " " + row["reward_spec"]["required_facts"][0]
    bad["id"] = "bad"
    a = audit_rows([bad], ROOT)
    assert a.rates["double_greeting"] == 1.0 and a.rates["answer_handed_over"] == 1.0
    # the user never says what the first gold call uses (its literal arguments): invented
    lit = next(r for r in rows if set(r["reward_spec"]["gold_calls"][0]["args"]) - {"limit", "offset"})
    gone = copy.deepcopy(lit)
    gone["messages"] = [m if m["role"] != "user" else {**m, "content": "help"} for m in gone["messages"]]
    b = audit_rows([gone], ROOT)
    assert b.rates["invented_args"] == 1.0, b.examples


def test_frames_and_distinct_2():
    assert frame_of("Let me search the bookings with status 'confirmed'.") == "let me search the"
    assert frame_of("Booking BK00012 is now cancelled.") == "booking <n> is now"
    assert distinct_n(["a b a b"]) == round(2 / 3, 4) and distinct_n([]) == 0.0


def test_the_audit_command_prints_the_table(dataset, monkeypatch, tmp_path):
    from envfactory.cli import app

    monkeypatch.setenv("ENVFACTORY_ROOT", str(ROOT))
    r = CliRunner().invoke(app, ["audit", str(dataset)])
    assert r.exit_code == 0, r.output
    assert "invented" in r.output and "distinct-2" in r.output
    # a folder that holds neither a dataset nor environments is a one-line error
    r = CliRunner().invoke(app, ["audit", str(tmp_path)])
    assert r.exit_code == 2 and "no env.yaml under this folder" in " ".join(r.output.split())


def test_answers_are_due_in_the_turn_whose_request_asks_for_them(dataset):
    """A sub-goal's ``answers`` say when each fact is due: said in an earlier turn's closing it was
    stated before the user asked; missing from its own turn's closing (said only at the end) it
    was held back."""
    rows = load_rows(dataset)
    row = next(r for r in rows if r["reward_spec"]["required_facts"])
    fact = row["reward_spec"]["required_facts"][0]
    asks = ["Please look into the first thing.", "Now the second thing.", "And a third thing."]

    def made(closings):
        r = copy.deepcopy(row)
        r["id"] = "made"
        r["user"]["subgoals"] = [
            {"text": t, "steps": [], "reveals": [], "kind": "request", "answers": [fact] if k == 1 else []}
            for k, t in enumerate(asks)
        ]
        msgs = [m for m in r["messages"] if m["role"] == "system"]
        for t, c in zip(asks, closings):
            msgs += [{"role": "user", "content": t}, {"role": "assistant", "content": c}]
        r["messages"] = msgs
        return audit_rows([r], ROOT)

    on_time = made(["Done.", f"It is {fact}.", f"Recap: {fact}."])
    assert on_time.rates["stated_early"] == 0.0 and on_time.rates["held_back"] == 0.0
    early = made([f"Done, and by the way {fact}.", f"It is {fact}.", f"Recap: {fact}."])
    assert early.rates["stated_early"] == 1.0
    late = made(["Done.", "Done too.", f"Recap: {fact}."])
    assert late.rates["held_back"] == 1.0


def test_show_prints_whole_rows_picked_by_the_seed_as_stored(dataset, monkeypatch):
    import json

    from envfactory.audit.dataset import pick_rows
    from envfactory.cli import app

    monkeypatch.setenv("ENVFACTORY_ROOT", str(ROOT))
    rows = load_rows(dataset)
    outs = [CliRunner().invoke(app, ["audit", str(dataset), "--show", "3", "--seed", "0"]) for _ in range(2)]
    assert outs[0].exit_code == 0, outs[0].output
    assert outs[0].output == outs[1].output  # the same seed picks the same rows
    dec, text, got = json.JSONDecoder(), outs[0].output, []
    pos = 0
    while text[pos:].strip():
        obj, pos = dec.raw_decode(text, len(text) - len(text[pos:].lstrip()))
        got.append(obj)
    want = pick_rows(rows, 3, 0)
    assert [g["id"] for g in got] == [w["id"] for w in want] and len(got) == 3
    by_id = {r["id"]: r for r in rows}
    for g in got:  # every message, tool calls and results included, exactly as stored
        assert g["messages"] == by_id[g["id"]]["messages"]
        assert any(m.get("tool_calls") for m in g["messages"]) and any(
            m["role"] == "tool" for m in g["messages"]
        )
    assert [r["id"] for r in pick_rows(list(reversed(rows)), 3, 0)] == [w["id"] for w in want]
    assert {r["id"] for r in pick_rows(rows, 3, 1)} != {w["id"] for w in want} or len(rows) <= 3

"""envfactory.rl: reset / step / reward over dataset rows, tasks and batches."""

from __future__ import annotations

import json

import pytest

import envfactory.rl as rl
from envfactory.errors import ConfigError

from ._data import dataset


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def rows(ds):
    return rl.load_rows(ds)


def _replay(env, row):
    """Send the row's recorded assistant messages; return the last step."""
    last = None
    for m in row["messages"]:
        if m["role"] == "assistant":
            last = env.step(m)
            if last[2]:
                break
    return last


def test_reset_gives_system_tools_and_first_user_message_at_the_rows_hash(ds, rows):
    src = rl.EnvironmentSource(ds)
    for row in rows:
        env = rl.make(row, source=src)
        obs = env.reset()
        assert obs["state_hash"] == row["initial_state_hash"]
        assert [m["role"] for m in obs["messages"]] == ["system", "user"]
        assert obs["messages"] == row["messages"][:2]  # the conversation starts as the row does
        assert {t["function"]["name"] for t in obs["tools"]} == {t["function"]["name"] for t in row["tools"]}
        assert str(env.environment.path).startswith(str(ds))  # from the dataset's own bundle


def test_gold_replay_earns_1_and_a_noop_earns_0_with_parts_in_info(ds, rows):
    src = rl.EnvironmentSource(ds)
    for row in rows:
        env = rl.make(row, source=src)
        env.reset()
        obs, reward, done, info = _replay(env, row)
        assert done and reward == 1.0 and info["reward"]["state_match"], (row["id"], info)
        noop = rl.make(row, source=src)
        noop.reset()
        done, steps = False, 0
        while not done:
            obs, reward, done, info = noop.step("All done.")
            steps += 1
        assert reward == 0.0 and steps == max(1, len(row["user"]["subgoals"]))
        parts = info["reward"]
        assert set(parts) >= {"state", "facts", "trace", "malformed_calls", "extra_writes", "partial"}
        assert parts["trace"] == 0.0


def test_tool_calls_run_on_the_session_and_errors_are_tool_messages(ds, rows):
    env = rl.make(rows[0], source=ds)
    env.reset()
    before = env.state_hash()
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a1",
                "type": "function",
                "function": {"name": "get_airport", "arguments": json.dumps({"code": "ZZZ"})},
            },
            {"id": "a2", "type": "function", "function": {"name": "get_airport", "arguments": "{not json"}},
            {"id": "a3", "type": "function", "function": {"name": "launch_rocket", "arguments": "{}"}},
            {
                "id": "a4",
                "type": "function",
                "function": {"name": "search_flights", "arguments": {"limit": 1}},
            },
        ],
    }
    obs, reward, done, info = env.step(msg)
    out = obs["messages"]
    assert [m["tool_call_id"] for m in out] == ["a1", "a2", "a3", "a4"] and not done and reward == 0.0
    errors = [json.loads(m["content"]).get("error") for m in out[:3]]
    assert errors == ["not_found", "invalid_argument", "unknown_tool"]
    assert json.loads(out[3]["content"])["count"] == 1
    assert env.state_hash() == before
    assert env.score().malformed_calls == 2  # bad JSON and a made-up tool


def test_episode_misuse_is_a_config_error(ds, rows):
    env = rl.make(rows[0], source=ds)
    with pytest.raises(ConfigError, match="reset"):
        env.step("hi")
    env.reset()
    while not env.step("Done.")[2]:
        pass
    with pytest.raises(ConfigError, match="over"):
        env.step("again")
    with pytest.raises(ConfigError):
        rl.make(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="missing"):
        rl.make({"id": "x"})


def test_turn_limit_ends_the_episode_as_truncated(ds, rows):
    row = dict(rows[0], turn_limit=2)
    env = rl.make(row, source=ds)
    env.reset()
    call = {
        "role": "assistant",
        "tool_calls": [{"id": "q", "function": {"name": "search_flights", "arguments": "{}"}}],
    }
    assert env.step(call)[2] is False
    _, reward, done, info = env.step(call)
    assert done and info["truncated"] and reward == 0.0


def test_a_task_object_with_its_environment(ds, rows):
    task = rl.task_from_row(rows[0])
    environment = rl.load_environment(ds)
    env = rl.make(task, environment=environment)
    obs = env.reset()
    assert env.environment is environment and obs["state_hash"] == rows[0]["initial_state_hash"]
    assert obs["messages"][1]["role"] == "user" and obs["messages"][1]["content"]


def test_batch_compiles_each_environment_once_and_steps_together(ds, rows):
    batch = rl.make_batch(rows * 3, source=ds)
    assert len({id(e.environment) for e in batch.envs}) == 1 and len(batch) == 3 * len(rows)
    obs = batch.reset()
    assert [o["state_hash"] for o in obs] == [r["initial_state_hash"] for r in rows * 3]
    finished = [False] * len(batch)
    while not all(finished):
        results = batch.step(["Done."] * len(batch))
        finished = [r[2] for r in results]
    assert batch.rewards() == [0.0] * len(batch)
    with pytest.raises(ConfigError, match="one message per environment"):
        batch.step(["x"])
    batch.close()


def test_parse_assistant_message_shapes():
    assert rl.parse_assistant_message("hi") == ("hi", [])
    text, calls = rl.parse_assistant_message(
        {
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "tool_calls": [{"name": "f", "arguments": {"x": 1}}, "junk"],
        }
    )
    assert text == "ab" and calls[0].name == "f" and calls[0].arguments == {"x": 1}
    assert calls[1].parse_error

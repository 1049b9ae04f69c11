"""The OpenEnv adapter with the real ``openenv-core`` package: in process and over its WebSocket server."""

from __future__ import annotations

import pytest

pytest.importorskip("openenv.core.env_server", reason="the OpenEnv adapter tests need openenv-core")

import envfactory.rl as rl  # noqa: E402
from envfactory.rl.openenv import EnvfactoryAction, openenv_app, openenv_factory  # noqa: E402

from ._data import dataset  # noqa: E402


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return dataset(tmp_path_factory)


def test_an_openenv_environment_resets_steps_and_scores(ds):
    rows = rl.load_rows(ds)
    make = openenv_factory(rows, source=ds)
    env = make()
    row = rows[1]
    obs = env.reset(task_id=row["id"])
    assert obs.state_hash == row["initial_state_hash"] and obs.tools and not obs.done
    for m in row["messages"]:
        if m["role"] == "assistant":
            obs = env.step(EnvfactoryAction(message=m))
            if obs.done:
                break
    assert obs.done and obs.reward == 1.0 and obs.info["reward"]["state_match"]
    assert env.state.task_id == row["id"] and env.state.step_count >= 1
    env.reset(task_id=row["id"])
    done = False
    while not done:
        obs = env.step(EnvfactoryAction(message="Done."))
        done = obs.done
    assert obs.reward == 0.0


def test_the_openenv_server_runs_an_episode_over_its_websocket(ds):
    from starlette.testclient import TestClient

    rows = rl.load_rows(ds)
    row = rows[0]
    with TestClient(openenv_app(rows, source=ds)) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": row["id"]}})
        first = ws.receive_json()
        assert first["type"] == "observation"
        assert first["data"]["observation"]["state_hash"] == row["initial_state_hash"]
        last = None
        for m in row["messages"]:
            if m["role"] == "assistant":
                ws.send_json({"type": "step", "data": {"message": m}})
                last = ws.receive_json()
                if last["data"]["done"]:
                    break
        assert last is not None and last["data"]["done"] and last["data"]["reward"] == 1.0

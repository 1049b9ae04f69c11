"""POST /control/{env}/sessions/{id}/reward: a rollout worker's session scored by the server."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

import envfactory.rl as rl
from envfactory.serve import ServeConfig, build_http_app

from ._data import dataset

TOKEN = "ctl-secret"


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return dataset(tmp_path_factory)


def _run(coro):
    return asyncio.run(coro)


async def _episode(app, row, calls, answer, extra=None):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000", headers=auth
    ) as h:
        created = (await h.post("/control/trip_desk/sessions", json={})).json()
        sid = created["session_id"]
        pool = app.state.servers["trip_desk"].pool
        for c in calls:  # what the worker's MCP client would do on the session
            pool.get(sid).session.try_call(c["tool"], c.get("args") or {})
        body = {"reward_spec": row["reward_spec"], "final_answer": answer, **(extra or {})}
        r = await h.post(f"/control/trip_desk/sessions/{sid}/reward", json=body)
        bad = await h.post(f"/control/trip_desk/sessions/{sid}/reward", content=b"{not json")
        unauthorized = await h.post(
            f"/control/trip_desk/sessions/{sid}/reward", json=body, headers={"Authorization": "Bearer nope"}
        )
        return created, r, bad, unauthorized


def test_reward_of_a_served_session_gold_vs_noop(ds):
    env = rl.load_environment(ds)
    app = build_http_app([env], ServeConfig(control_token=TOKEN))
    row = rl.load_rows(ds)[0]
    answer = [m["content"] for m in row["messages"] if m["role"] == "assistant" and not m.get("tool_calls")][
        -1
    ]
    created, r, bad, unauthorized = _run(
        _episode(
            app,
            row,
            row["reward_spec"]["gold_calls"],
            answer,
            {"calls": [dict(c, ok=True) for c in row["reward_spec"]["gold_calls"]]},
        )
    )
    assert created["hash"] == row["initial_state_hash"]
    assert r.status_code == 200 and r.json()["reward"]["reward"] == 1.0 and r.json()["reward"]["trace"] == 1.0
    assert bad.status_code == 400 and unauthorized.status_code == 401
    _, r0, _, _ = _run(_episode(app, row, [], "Done."))
    assert r0.status_code == 200 and r0.json()["reward"]["reward"] == 0.0


def test_reward_requests_are_validated(ds):
    env = rl.load_environment(ds)
    app = build_http_app([env], ServeConfig(control_token=TOKEN))
    row = rl.load_rows(ds)[0]

    async def go():
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1:8000",
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as h:
            sid = (await h.post("/control/trip_desk/sessions", json={})).json()["session_id"]
            out = []
            for body in (
                {},
                {"reward_spec": {"nope": 1}},
                {"reward_spec": row["reward_spec"], "extra": 1},
                {"reward_spec": row["reward_spec"], "final_answer": 3},
                {"reward_spec": row["reward_spec"], "calls": [{"args": {}}]},
            ):
                r = await h.post(f"/control/trip_desk/sessions/{sid}/reward", content=json.dumps(body))
                out.append((r.status_code, r.json()["error"]))
            gone = await h.post(
                "/control/trip_desk/sessions/nosuch/reward", json={"reward_spec": row["reward_spec"]}
            )
            return out, gone.status_code

    out, gone = _run(go())
    assert out == [(400, "bad_request")] * 5 and gone == 404

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import uvicorn

from envfactory.runtime import Environment, load_environment
from envfactory.serve import ServeConfig, build_http_app

REPO = Path(__file__).resolve().parents[2]
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


@pytest.fixture(scope="session")
def env() -> Environment:
    return load_environment(TRIP_DESK)


class LiveServer:
    def __init__(self, app, server: uvicorn.Server, port: int):
        self.app = app
        self.server = server
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    def url(self, env: str = "trip_desk") -> str:
        return f"{self.base}/mcp/{env}"

    def pool(self, env: str = "trip_desk"):
        return self.app.state.servers[env].pool


@contextlib.contextmanager
def live_http(envs: list[Environment], config: ServeConfig) -> Iterator[LiveServer]:
    """uvicorn on 127.0.0.1, port 0, in a thread; stopped on exit."""
    app = build_http_app(envs, config)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="error",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
    )
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not t.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveServer(app, server, port)
    finally:
        server.should_exit = True
        t.join(10)


def http_client(token: str | None = None, **headers: str) -> httpx2.AsyncClient:
    h = dict(headers)
    if token:
        h["Authorization"] = f"Bearer {token}"
    return httpx2.AsyncClient(headers=h, timeout=httpx2.Timeout(30.0))

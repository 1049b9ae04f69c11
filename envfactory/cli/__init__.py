"""The envfactory command line (typer + rich). Thin: parse options, call one function, print."""

from __future__ import annotations

# Each module registers its commands on ``app``.
from . import (
    audit_cmds,  # noqa: F401,E402
    bench_cmds,  # noqa: F401,E402
    build_cmds,  # noqa: F401,E402
    eval_cmds,  # noqa: F401,E402
    graph_cmds,  # noqa: F401,E402
    model_cmds,  # noqa: F401,E402
    rl_cmds,  # noqa: F401,E402
    runtime_cmds,  # noqa: F401,E402
    serve_cmds,  # noqa: F401,E402
    synth_cmds,  # noqa: F401,E402
    tasks_cmds,  # noqa: F401,E402
    verify_cmds,  # noqa: F401,E402
)
from ._app import app

__all__ = ["app", "main"]


def main() -> None:
    app()

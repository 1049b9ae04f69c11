"""The envfactory command line (typer + rich). Thin: parse options, call one function, print."""

from __future__ import annotations

from ._app import app

# Each module registers its commands on ``app``.
from . import runtime_cmds  # noqa: F401,E402
from . import bench_cmds  # noqa: F401,E402
from . import build_cmds  # noqa: F401,E402
from . import graph_cmds  # noqa: F401,E402
from . import verify_cmds  # noqa: F401,E402
from . import serve_cmds  # noqa: F401,E402
from . import tasks_cmds  # noqa: F401,E402
from . import eval_cmds  # noqa: F401,E402
from . import synth_cmds  # noqa: F401,E402
from . import audit_cmds  # noqa: F401,E402

__all__ = ["app", "main"]


def main() -> None:
    app()

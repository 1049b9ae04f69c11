"""The typer application and helpers shared by every command module."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console

from ..config import load_cli_config, project_paths
from ..errors import EnvFactoryError

__all__ = ["app", "console", "err_console", "fail", "handle_errors", "domain_dirs", "env_dirs"]

app = typer.Typer(
    name="envfactory",
    help=(
        "Build executable, verified tool environments for LLM agents from API documentation, "
        "serve them over MCP, and synthesize and evaluate trajectories on them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
err_console = Console(stderr=True)


@app.callback()
def _main(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(
        None, "--config", "-c", help="YAML file of option defaults per command (see configs/).", show_default=False
    ),
) -> None:
    """envfactory: API docs in, verified tool environments and trajectories out."""
    if config is not None:
        try:
            ctx.default_map = load_cli_config(config).default_map()
        except EnvFactoryError as e:
            fail(str(e))


def fail(message: str, code: int = 2) -> "typer.Exit":
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """User mistakes and failed items end with a one-line message, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EnvFactoryError as e:
            fail(str(e))
        except OSError as e:
            # a path the user gave that cannot be written or read (--out /dev/null/x, a full disk)
            fail(f"{e.filename}: {e.strerror}" if e.filename and e.strerror else f"{type(e).__name__}: {e}")
        except KeyboardInterrupt:
            err_console.print("interrupted")
            sys.exit(130)

    return wrapper


def domain_dirs(domains_root: Path | None = None) -> list[Path]:
    root = domains_root or project_paths().domains_dir
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and any(p.rglob("env.yaml")))


def env_dirs(domain: str | None, env: str | None = None, domains_root: Path | None = None) -> list[Path]:
    """Environment folders for a domain (or all domains), optionally one env by name."""
    root = domains_root or project_paths().domains_dir
    if domain:
        d = root / domain
        if not d.is_dir():
            known = ", ".join(p.name for p in domain_dirs(root)) or "none"
            fail(f"domain {domain!r} not found under {root} (known: {known}); run 'envfactory build --domain {domain}'")
        dirs = sorted(p.parent for p in d.rglob("env.yaml"))
    else:
        dirs = sorted(p.parent for p in root.rglob("env.yaml")) if root.is_dir() else []
    dirs = [p for p in dirs if not any(part.startswith(".") for part in p.relative_to(root).parts)]  # skip .NAME.build-* folders
    if env:
        dirs = [p for p in dirs if p.name == env]
        if not dirs:
            fail(f"environment {env!r} not found in domain {domain or '(any)'}")
    if not dirs:
        fail(f"no environments found under {root}" + (f"/{domain}" if domain else ""))
    return dirs

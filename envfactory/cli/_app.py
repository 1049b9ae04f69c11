"""The typer application and helpers shared by every command module.

Start-up time is part of the interface: ``envfactory --help`` must cost a few interpreter
starts, not a second. So this module and every command module import only typer and the
standard library at the top; rich, pydantic and each command's machinery load inside the
command that uses them (``tests/cli/test_startup.py`` guards the import set,
``envfactory bench cli`` measures the time). Help is click's plain formatter: typer's rich
formatter alone costs more than the whole budget.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from .._version import __version__
from ..errors import EnvFactoryError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["app", "console", "err_console", "fail", "handle_errors", "domain_dirs", "env_dirs", "ROOT_ENV"]

ROOT_ENV = "ENVFACTORY_ROOT"


class _PathOption:
    """Coerce a path option with ``Path()`` (None stays None)."""

    def coerce(self, value: Any, *args: Any, **kwargs: Any) -> Path | None:
        return None if value is None else Path(value)


class _Flag:
    """A flag's value is already a bool."""

    def coerce(self, value: Any, *args: Any, **kwargs: Any) -> bool:
        return bool(value)


class _RootGroup(TyperGroup):
    """The root group, whose own options are parsed for every command, ``<command> --help`` included.

    typer coerces every option that is not a flag through a pydantic TypeAdapter, and importing
    pydantic for that costs more than the whole start-up budget; ``--root`` and ``--config`` need
    only ``Path()``, the flags nothing. typer keeps a parameter's coercion in its (private)
    ``_runtime_param`` slot, built on first use: where that slot exists and is empty we fill it;
    a typer without it coerces as usual (``tests/cli/test_startup.py`` checks both).
    """

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)  # the declared options and the help option
        for param in params:
            if getattr(param, "_runtime_param", False) is not None:
                continue  # not typer's slot, or already built
            if getattr(param, "is_flag", False):
                setattr(param, "_runtime_param", _Flag())  # noqa: B010 (typer slot, not declared)
            elif param.name in ("root", "config"):
                setattr(param, "_runtime_param", _PathOption())  # noqa: B010
        return params


app = typer.Typer(
    name="envfactory",
    cls=_RootGroup,
    help=(
        "Build executable, verified tool environments for LLM agents from API documentation, "
        "serve them over MCP, and synthesize and evaluate trajectories on them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class _LazyConsole:
    """A rich Console created on first use (importing rich costs more than the --help budget).

    Attribute access and ``with`` go to the real Console, so it can be handed to rich's
    Progress and Live as it is.
    """

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs
        self._console: Console | None = None

    def _real(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)

    def __enter__(self) -> Console:
        return self._real().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._real().__exit__(*exc)


console: Console = _LazyConsole()  # type: ignore[assignment]
err_console: Console = _LazyConsole(stderr=True)  # type: ignore[assignment]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"envfactory {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="YAML file of option defaults per command (see configs/).",
        show_default=False,
    ),
    root: Path | None = typer.Option(
        None,
        "--root",
        envvar=ROOT_ENV,
        show_default=False,
        help=f"Project root holding domains/, resources/, eval/ and trajectories/ (default: ${ROOT_ENV}, "
        "else the current folder). Every command reads and writes under it.",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """envfactory: API docs in, verified tool environments and trajectories out."""
    if root is not None:
        _set_root(ctx, root)
    if config is not None:
        from ..config import load_cli_config

        try:
            ctx.default_map = load_cli_config(config).default_map()
        except EnvFactoryError as e:
            fail(str(e))


def _set_root(ctx: typer.Context, root: Path) -> None:
    """Point ``project_paths()`` at ``root`` for this invocation (restored when it ends, for in-process callers)."""
    if not root.is_dir():
        fail(f"--root {root}: not a folder")
    previous = os.environ.get(ROOT_ENV)
    os.environ[ROOT_ENV] = str(root.resolve())

    def restore() -> None:
        if previous is None:
            os.environ.pop(ROOT_ENV, None)
        else:
            os.environ[ROOT_ENV] = previous

    ctx.call_on_close(restore)


def fail(message: str, code: int = 2) -> typer.Exit:
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


def _domains_root(domains_root: Path | None) -> Path:
    if domains_root is not None:
        return domains_root
    from ..config import project_paths

    return project_paths().domains_dir


def domain_dirs(domains_root: Path | None = None) -> list[Path]:
    root = _domains_root(domains_root)
    if not root.is_dir():
        return []
    return sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and any(p.rglob("env.yaml"))
    )


def env_dirs(domain: str | None, env: str | None = None, domains_root: Path | None = None) -> list[Path]:
    """Environment folders for a domain (or all domains), optionally one env by name."""
    root = _domains_root(domains_root)
    if domain:
        d = root / domain
        if not d.is_dir():
            known = ", ".join(p.name for p in domain_dirs(root)) or "none"
            fail(
                f"domain {domain!r} not found under {root} (known: {known}); run 'envfactory build --domain {domain}'"
                + _root_hint(root)
            )
        dirs = sorted(p.parent for p in d.rglob("env.yaml"))
    else:
        dirs = sorted(p.parent for p in root.rglob("env.yaml")) if root.is_dir() else []
    dirs = [
        p for p in dirs if not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]  # skip .NAME.build-* folders
    if env:
        dirs = [p for p in dirs if p.name == env]
        if not dirs:
            fail(f"environment {env!r} not found in domain {domain or '(any)'}")
    if not dirs:
        fail(f"no environments found under {root}" + (f"/{domain}" if domain else "") + _root_hint(root))
    return dirs


def _root_hint(domains_root: Path) -> str:
    # The usual cause of "nothing found" is running from another folder than the project.
    if domains_root.is_dir():
        return ""
    return f"; {domains_root} does not exist: run from the project folder, pass --root DIR or set ${ROOT_ENV}"


def nonempty_path(value: str) -> Path:
    """Parser of path options: an empty value would silently mean the current folder, so it is refused."""
    if not str(value).strip():
        raise typer.BadParameter("is empty: give a path (use '.' for the current folder)")
    return Path(value)

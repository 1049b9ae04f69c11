"""serve, bench serve: environments as MCP servers (stdio or streamable HTTP)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import ConfigError
from ._app import app, console, env_dirs, err_console, fail, handle_errors
from .bench_cmds import bench_app

if TYPE_CHECKING:
    from ..serve import ServeConfig


def _launcher() -> list[str]:
    exe = shutil.which("envfactory")
    if exe:
        return [str(Path(exe).resolve())]
    return [sys.executable, "-m", "envfactory"]


@app.command()
@handle_errors
def serve(
    domain: str = typer.Option("travel", "--domain", "-d", help="Domain whose environments to serve."),
    env: str | None = typer.Option(
        None, "--env", "-e", help="One environment (stdio needs one when a domain has several)."
    ),
    transport: str = typer.Option(
        "stdio", "--transport", "-t", help="stdio (one environment per process) or http."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP interface to bind; loopback by default."),
    port: int = typer.Option(8000, "--port", "-p", help="HTTP port (0: any free port)."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="stdio: no banner on stderr (for harnesses that start many servers)."
    ),
    token: str | None = typer.Option(
        None, "--token", envvar="ENVFACTORY_SERVE_TOKEN", help="Bearer token MCP HTTP clients must send."
    ),
    control_token: str | None = typer.Option(
        None,
        "--control-token",
        envvar="ENVFACTORY_CONTROL_TOKEN",
        help="Enable /control/... for harnesses, guarded by this bearer token.",
    ),
    idle_timeout: float = typer.Option(
        1800.0, "--idle-timeout", help="Seconds of inactivity before a session is freed."
    ),
    max_sessions: int = typer.Option(1000, "--max-sessions", help="Open sessions per environment at most."),
    max_total_sessions: int = typer.Option(
        10_000,
        "--max-total-sessions",
        min=0,
        help="Open sessions over all environments of the server (0: no cap).",
    ),
    max_memory_mb: int = typer.Option(
        4096,
        "--max-memory-mb",
        min=0,
        help="Server memory (MiB) from which new sessions are refused (0: no budget).",
    ),
    max_calls: int = typer.Option(10_000, "--max-calls", help="Tool calls per session at most."),
    max_body_bytes: int = typer.Option(1 << 20, "--max-body-bytes", help="Largest HTTP request body."),
    max_argument_bytes: int = typer.Option(
        64 * 1024, "--max-argument-bytes", help="Largest JSON of one call's arguments."
    ),
    allowed_host: list[str] = typer.Option(
        [], "--allowed-host", help="Extra Host header value to accept (repeatable)."
    ),
    initial_state: Path | None = typer.Option(
        None, "--initial-state", help="SQLite state every new session starts from."
    ),
    fast_path: bool = typer.Option(
        True,
        "--fast-path/--no-fast-path",
        help="HTTP: answer tools/call without the SDK's stream stack (same bytes, less CPU).",
    ),
    print_config: bool = typer.Option(False, "--print-config", help="Print client configuration and exit."),
) -> None:
    """Serve environments over MCP: stdio (one per process) or streamable HTTP at /mcp/<env>."""
    if transport not in ("stdio", "http"):
        fail(f"--transport must be stdio or http, not {transport!r}")
    config = _serve_config(
        host=host,
        port=port,
        token=token,
        control_token=control_token,
        idle_timeout=idle_timeout,
        max_sessions=max_sessions,
        max_calls_per_session=max_calls,
        max_body_bytes=max_body_bytes,
        max_argument_bytes=max_argument_bytes,
        allowed_hosts=allowed_host,
        initial_state=initial_state,
        fast_path=fast_path,
        max_total_sessions=max_total_sessions or None,
        max_memory_mb=max_memory_mb or None,
    )
    dirs = env_dirs(domain, env)
    if print_config:
        _print_client_config(domain, dirs, config, host, port)
        return
    if transport == "stdio":
        _serve_stdio(domain, dirs, config, quiet)
    else:
        _serve_http(domain, dirs, config, host, token, control_token)


def _serve_config(**options: Any) -> ServeConfig:
    from ..serve import ServeConfig

    try:
        return ServeConfig(**options)
    except ValueError as e:
        raise ConfigError(f"serve: {e}") from e


def _serve_stdio(domain: str, dirs: list[Path], config: ServeConfig, quiet: bool) -> None:
    if len(dirs) != 1:
        # Before any handshake: the client sees the connection close, its user reads this on stderr.
        fail(
            f"domain {domain!r} has {len(dirs)} environments and stdio serves one per process: pass --env with one "
            f"of {', '.join(d.name for d in dirs)} (or --transport http to serve them all at /mcp/<env>)"
        )
    from ..runtime import load_environment
    from ..serve import serve_stdio

    environment = load_environment(dirs[0])
    if not quiet:
        err_console.print(f"serving {domain}/{environment.name} on stdio", highlight=False)
    serve_stdio(environment, config)


def _serve_http(
    domain: str,
    dirs: list[Path],
    config: ServeConfig,
    host: str,
    token: str | None,
    control_token: str | None,
) -> None:
    from ..runtime import load_environment
    from ..serve import serve_http
    from ..serve.config import LOOPBACK_HOSTS

    envs = [load_environment(d) for d in dirs]
    if host not in LOOPBACK_HOSTS and not token:
        err_console.print(
            f"[yellow]warning:[/] binding {host} without --token: anyone who can reach it can call tools"
        )

    def listening(bound_host: str, bound_port: int) -> None:
        base = f"http://{bound_host}:{bound_port}"
        for e in envs:
            err_console.print(f"serving {domain}/{e.name} at {base}/mcp/{e.name}", highlight=False)
        if control_token:
            err_console.print(f"control channel at {base}/control/<env>/sessions", highlight=False)

    serve_http(
        envs, config, on_listening=listening
    )  # with --port 0 the banner is how a caller learns the port


def _print_client_config(domain: str, dirs: list[Path], config, host: str, port: int) -> None:
    from ..config import project_paths
    from ..serve import build_client_config

    cfg = build_client_config(
        domain, [d.name for d in dirs], config, command=_launcher(), root=project_paths().root.resolve()
    )
    typer.echo("# stdio: one environment per process (run from anywhere)")
    for line in cfg["stdio"].values():
        typer.echo(line)
    typer.echo("\n# mcp.json (Claude Desktop, Cursor, VS Code ...): merge into your client's config")
    typer.echo(json.dumps(cfg["mcp.json"], indent=2))
    typer.echo(
        f"\n# streamable HTTP: start with  envfactory serve --domain {domain} --transport http"
        f" --host {host} --port {port}"
    )
    for name, url in cfg["http"].items():
        typer.echo(f"{name}: {url}")
    if "control" in cfg:
        typer.echo("\n# control channel (harnesses only; send the control token as a bearer token)")
        for name, url in cfg["control"].items():
            typer.echo(f"{name}: {url}")


@bench_app.command("serve")
@handle_errors
def bench_serve(
    domain: str = typer.Option("travel", "--domain", "-d", help="Domain holding the reference environment."),
    env: str = typer.Option(
        "trip_desk", "--env", "-e", help="Reference environment (needs get_flight, search_flights)."
    ),
    calls: int = typer.Option(
        2000, "--calls", help="Tool calls per concurrency level (split across sessions)."
    ),
    concurrency: str = typer.Option(
        "1,8,32", "--concurrency", help="Concurrent sessions to measure, comma-separated."
    ),
    transports: str = typer.Option("http,stdio", "--transports", help="Transports to measure."),
    max_seconds: float = typer.Option(
        20.0, "--max-seconds", help="Stop a level after this long, whatever is done."
    ),
    server_paths: str = typer.Option(
        "fast",
        "--server-paths",
        help="HTTP server paths to measure: fast (the default server), sdk (--no-fast-path), "
        "or both: fast,sdk.",
    ),
    memory_sessions: int = typer.Option(
        1000,
        "--memory-sessions",
        min=0,
        help="Memory figure: MCP sessions kept open at once (0: no memory figure).",
    ),
    memory_calls: int = typer.Option(
        100,
        "--memory-calls",
        min=0,
        help="Memory figure: hostile calls (in-lists of new lengths) per session.",
    ),
) -> None:
    """Tool calls/s and p50/p99 latency over streamable HTTP and stdio, beside the in-process runtime.

    Then the memory figure: the server's RSS after --memory-sessions sessions of --memory-calls
    hostile calls each (all kept open), and after they close.
    """
    from rich.table import Table

    from ..bench.serve import run_serve_bench

    try:
        levels = [int(x) for x in concurrency.split(",") if x.strip()]
    except ValueError:
        fail(f"--concurrency: comma-separated session counts such as 1,8,32, not {concurrency!r}")
    if not levels or min(levels) < 1:
        fail(f"--concurrency: every level must be at least 1 session, got {concurrency!r}")
    kinds = [x.strip() for x in transports.split(",") if x.strip()]
    for k in kinds:
        if k not in ("http", "stdio"):
            fail(f"--transports: unknown transport {k!r}")
    paths = [x.strip() for x in server_paths.split(",") if x.strip()]
    for p in paths:
        if p not in ("fast", "sdk"):
            fail(f"--server-paths: unknown server path {p!r} (fast, sdk)")
    env_dir = env_dirs(domain, env)[0]
    with console.status("benchmarking the MCP server ..."):
        rep = run_serve_bench(
            env_dir, calls=calls, levels=levels, transports=kinds, max_seconds=max_seconds, server_paths=paths
        )
    t = Table(title=f"bench serve: {rep.env}, get_flight/search_flights mix, {calls} calls per level")
    for c in (
        "transport",
        "client",
        "server path",
        "sessions",
        "calls",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "vs in-process",
        "target",
    ):
        t.add_column(c, justify="left" if c in ("transport", "client", "server path") else "right")
    for r in rep.rows:
        target = ""
        if r.transport == "http" and r.sessions == 8:
            target = "[green]>= 1000/s[/]" if r.calls_per_s >= 1000 else "[red]< 1000/s[/]"
        ratio = f"{rep.inprocess.calls_per_s / r.calls_per_s:.0f}x slower" if r.calls_per_s else "-"
        t.add_row(
            r.transport,
            r.client,
            r.server_path,
            str(r.sessions),
            str(r.calls),
            f"{r.calls_per_s:,.0f}",
            f"{r.p50_ms:.2f}",
            f"{r.p99_ms:.2f}",
            ratio if r.transport != "in-process" else "1x",
            target,
        )
    console.print(t)
    for note in rep.notes:
        console.print(f"note: {note}", highlight=False)
    if memory_sessions and "http" in kinds:
        _bench_serve_memory(env_dir, memory_sessions, memory_calls)


def _bench_serve_memory(env_dir: Path, sessions: int, calls: int) -> None:
    from ..bench.serve import run_serve_memory_bench

    with console.status(f"memory: {sessions} sessions x {calls} hostile calls ..."):
        m = run_serve_memory_bench(env_dir, sessions=sessions, calls=calls)
    budget = f"{m.memory_budget_mib} MiB" if m.memory_budget_mib else "none"
    console.print(
        f"memory (HTTP server RSS, budget {budget}): start {m.rss_start_mib:,.0f} MiB; "
        f"{m.opened} sessions open after {m.calls:,} hostile calls ({m.call_errors} tool errors, "
        f"{m.refused} sessions refused) {m.rss_open_mib:,.0f} MiB; after they closed "
        f"{m.rss_closed_mib:,.0f} MiB ({m.seconds:.0f} s)",
        highlight=False,
    )

"""inspect, call, spec-schema: look at environments and call their tools by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..runtime import load_environment
from ..spec import spec_json_schema
from ._app import app, console, env_dirs, fail, handle_errors


@app.command()
@handle_errors
def inspect(
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help="Only this domain (default: all)."),
    env: Optional[str] = typer.Option(None, "--env", "-e", help="Only this environment."),
    tools: bool = typer.Option(False, "--tools", help="List every tool with its kind and description."),
) -> None:
    """Show environments with their tools, entities and seeded row counts."""
    table = Table(title="Environments")
    for col in ("domain", "environment", "tools", "entities", "rows"):
        table.add_column(col, justify="right" if col in ("tools", "rows") else "left")
    total_rows = 0
    for d in env_dirs(domain, env):
        e = load_environment(d)
        counts = e.row_counts()
        total_rows += sum(counts.values())
        ents = ", ".join(f"{k} ({v})" for k, v in counts.items())
        table.add_row(e.spec.domain, e.spec.name, str(len(e.spec.tools)), ents, f"{sum(counts.values()):,}")
        if tools:
            tt = Table(title=f"{e.spec.domain}/{e.spec.name} tools", show_lines=False)
            tt.add_column("tool")
            tt.add_column("kind")
            tt.add_column("description", overflow="fold")
            for t in e.spec.tools:
                tt.add_row(t.name, t.kind.value, t.description)
            console.print(tt)
    console.print(table)
    console.print(f"total rows: {total_rows:,}")


@app.command()
@handle_errors
def call(
    tool: str = typer.Argument(..., help="Tool name, e.g. search_flights."),
    args: str = typer.Option("{}", "--args", "-a", help="Arguments as a JSON object."),
    domain: str = typer.Option("travel", "--domain", "-d", help="Domain of the environment."),
    env: Optional[str] = typer.Option(None, "--env", "-e", help="Environment (default: the one that has the tool)."),
    raw: bool = typer.Option(False, "--json", help="Print plain JSON."),
) -> None:
    """Call one tool on a fresh session and print the result or the error the agent would see."""
    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as e:
        fail(f"--args is not valid JSON: {e.msg} at column {e.colno}")
    if not isinstance(arguments, dict):
        fail("--args must be a JSON object, e.g. '{\"flight_id\": \"FL00001\"}'")
    candidates = env_dirs(domain, env)
    target = None
    for d in candidates:
        e = load_environment(d)
        if tool in e.tool_names:
            target = e
            break
    if target is None:
        fail(f"no environment in domain {domain!r} has a tool {tool!r}; see 'envfactory inspect --domain {domain} --tools'")
    with target.new_session() as s:
        out = s.try_call(tool, arguments)
    if raw:
        typer.echo(json.dumps(out, indent=2))
    elif out["ok"]:
        console.print_json(json.dumps(out["result"]))
    else:
        console.print(f"[bold red]{out['error']}[/]: {out['message']}", highlight=False)
    if not out["ok"]:
        raise typer.Exit(1)


@app.command("spec-schema")
@handle_errors
def spec_schema(out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout.")) -> None:
    """Print the JSON Schema of the env.yaml format (validate specs with any JSON Schema tool)."""
    text = json.dumps(spec_json_schema(), indent=2)
    if out:
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {out}")
    else:
        typer.echo(text)

"""inspect, call, spec-schema: look at environments and call their tools by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ._app import app, console, env_dirs, fail, handle_errors

if TYPE_CHECKING:
    from ..spec import EntitySpec, ToolSpec


def describe_params(tool: ToolSpec) -> list[str]:
    """One line per parameter an agent may pass: name, type, whether required, allowed values."""
    from ..spec import tool_input_schema

    schema = tool_input_schema(tool)
    required = set(schema.get("required", []))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "any")
        items = prop.get("items") or {}
        enum = prop.get("enum") or items.get("enum")
        if kind == "array" and items:
            kind = f"list of {items.get('type', 'any')}"
        text = f"{name}: {kind}" + (" (required)" if name in required else "")
        if enum:
            text += " one of " + "|".join(str(v) for v in enum)
        lines.append(text)
    return lines


@app.command()
@handle_errors
def inspect(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain (default: all)."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    tools: bool = typer.Option(
        False,
        "--tools",
        help="List every tool: kind, parameters (type, required, allowed values), description.",
    ),
) -> None:
    """Show environments with their tools, entities and seeded row counts."""
    from rich.table import Table

    from ..runtime import load_environment

    table = Table(title="Environments")
    for col in ("domain", "environment", "tools", "entities", "rows"):
        table.add_column(col, justify="right" if col in ("tools", "rows") else "left")
    total_rows = 0
    for d in env_dirs(domain, env):
        e = load_environment(d)
        counts = e.row_counts()
        total_rows += sum(counts.values())
        ents = ", ".join(f"{k} ({v}{_singleton_note(e.spec.entity(k))})" for k, v in counts.items())
        table.add_row(e.spec.domain, e.spec.name, str(len(e.spec.tools)), ents, f"{sum(counts.values()):,}")
        if tools:
            tt = Table(title=f"{e.spec.domain}/{e.spec.name} tools", show_lines=True)
            tt.add_column("tool", no_wrap=True)
            tt.add_column("kind")
            tt.add_column("parameters", overflow="fold")
            tt.add_column("description", overflow="fold")
            for t in e.spec.tools:
                tt.add_row(t.name, t.kind.value, "\n".join(describe_params(t)) or "-", t.description)
            console.print(tt)
    console.print(table)
    console.print(f"total rows: {total_rows:,}")


def _singleton_note(ent: EntitySpec) -> str:
    """``; singleton`` (one object), ``; one per file`` (a per-parent singleton), else nothing."""
    if not ent.singleton:
        return ""
    return f"; one per {ent.parent}" if ent.parent else "; singleton"


def _find_tool(tool: str, domain: str, env: str | None) -> tuple[Path, str]:
    """The environment folder holding ``tool`` (``env/tool`` names the environment), and the tool name.

    More than one environment with the tool is an error listing them: calling the first one
    found would run a different tool than the user may mean.
    """
    from ..spec import load_spec

    if "/" in tool:
        prefix, _, tool = tool.partition("/")
        if env is not None and env != prefix:
            fail(f"{prefix}/{tool} names environment {prefix!r} but --env says {env!r}")
        env = prefix
    holders = [d for d in env_dirs(domain, env) if any(t.name == tool for t in load_spec(d).tools)]
    if not holders:
        where = f"environment {env!r}" if env else f"domain {domain!r}"
        fail(f"no tool {tool!r} in {where}; see 'envfactory inspect --domain {domain} --tools'")
    if len(holders) > 1:
        fail(
            f"tool {tool!r} is in {len(holders)} environments of domain {domain!r}; name one: "
            + ", ".join(f"{d.name}/{tool}" for d in holders)
            + " (or pass --env)"
        )
    return holders[0], tool


@app.command()
@handle_errors
def call(
    tool: str = typer.Argument(
        ..., help="Tool name, e.g. search_flights, or ENV/TOOL, e.g. trip_desk/search_flights."
    ),
    args: str = typer.Option("{}", "--args", "-a", help="Arguments as a JSON object."),
    domain: str = typer.Option("travel", "--domain", "-d", help="Domain of the environment."),
    env: str | None = typer.Option(
        None, "--env", "-e", help="Environment (default: the one that has the tool; an error if several do)."
    ),
    raw: bool = typer.Option(False, "--json", help="Print plain JSON."),
) -> None:
    """Call one tool on a fresh session and print the result or the error the agent would see."""
    try:
        arguments: Any = json.loads(args)
    except json.JSONDecodeError as e:
        fail(f"--args is not valid JSON: {e.msg} at column {e.colno}")
    if not isinstance(arguments, dict):
        fail('--args must be a JSON object, e.g. \'{"flight_id": "FL00001"}\'')
    folder, name = _find_tool(tool, domain, env)
    from ..runtime import load_environment

    with load_environment(folder).new_session() as s:
        out = s.try_call(name, arguments)
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
def spec_schema(
    out: Path | None = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout."),
) -> None:
    """Print the JSON Schema of the env.yaml format (validate specs with any JSON Schema tool)."""
    from ..spec import spec_json_schema

    text = json.dumps(spec_json_schema(), indent=2)
    if out:
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {out}")
    else:
        typer.echo(text)

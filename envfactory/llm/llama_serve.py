"""``python -m envfactory.llm.llama_serve ARGS``: llama.cpp's OpenAI-compatible server, with prompts
rendered as text.

llama-cpp-python's ``chatml-function-calling`` chat format (the one with ``tools``) renders its
Jinja prompt template with HTML autoescaping, so every quote, apostrophe, ``<``, ``>`` and ``&`` of a
message reaches the model as an entity (``I&#39;m``, ``{&#34;goal&#34;}``) and the model copies
them into its replies. A prompt is not HTML: this launcher turns autoescaping off in that module's
template environments, then runs ``llama_cpp.server`` with the same arguments.
"""

from __future__ import annotations

import runpy
from typing import Any

__all__ = ["disable_prompt_autoescape", "main"]


def disable_prompt_autoescape() -> None:
    """Make ``llama_cpp.llama_chat_format`` render prompt templates without HTML escaping."""
    import llama_cpp.llama_chat_format as chat_format

    base = chat_format.ImmutableSandboxedEnvironment
    if getattr(base, "_envfactory_plain", False):
        return

    class PlainTextEnvironment(base):  # type: ignore[misc, valid-type]
        _envfactory_plain = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["autoescape"] = False
            super().__init__(*args, **kwargs)

    chat_format.ImmutableSandboxedEnvironment = PlainTextEnvironment  # type: ignore[misc]


def main() -> None:
    disable_prompt_autoescape()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()

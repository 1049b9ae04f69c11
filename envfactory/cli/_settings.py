"""Settings models as CLI options: ``--sampler-config '{"p_branch": 0.5}'`` on the command line,
or a mapping under the command's section of a config file (``sampler_config: {p_branch: 0.5}``).

Click hands a config file's mapping to the option's parser as a dict and a command-line value
as a string (JSON or YAML flow), so one parser serves both.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import typer

__all__ = ["settings_parser"]


def settings_parser(model_path: str, example: str) -> Callable[[Any], Any]:
    """A typer ``parser`` that builds the pydantic model at ``module:Class`` (imported on first
    use, so ``--help`` stays fast) from a JSON/YAML string or a mapping."""

    def parse(value: Any) -> Any:
        module, _, name = model_path.partition(":")
        model = getattr(importlib.import_module(module), name)
        if value is None or isinstance(value, model):
            return value
        if isinstance(value, str):
            import yaml  # only when a setting is given: start-up stays light

            try:
                value = yaml.safe_load(value) if value.strip() else {}
            except yaml.YAMLError as e:
                raise typer.BadParameter(f"not JSON or YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(value, dict):
            raise typer.BadParameter(f"a mapping of setting: value is needed, e.g. '{example}'")
        from pydantic import ValidationError

        try:
            return model.model_validate(value)
        except ValidationError as e:
            msgs = [f"{'.'.join(map(str, err['loc'])) or name}: {err['msg']}" for err in e.errors()]
            raise typer.BadParameter(f"{name}: " + "; ".join(msgs)) from None

    parse.__name__ = model_path.rpartition(":")[2]
    return parse

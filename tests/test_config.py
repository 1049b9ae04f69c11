"""Config files: sections become click default maps; bad files are ConfigErrors, not tracebacks."""

from __future__ import annotations

import pytest

from envfactory.config import load_cli_config
from envfactory.errors import ConfigError


def test_sections_nest_by_sub_command_and_option_names_use_underscores(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("build:\n  seed: 7\nbench runtime:\n  max-sessions: 5\n", encoding="utf-8")
    assert load_cli_config(p).default_map() == {
        "build": {"seed": 7},
        "bench": {"runtime": {"max_sessions": 5}},
    }


@pytest.mark.parametrize(
    "text",
    [
        '"": {seed: 1}\n',  # a section without a command name
        "bench: {runtime: 5}\nbench runtime: {n: 1}\n",  # an option and a sub-command of one name
    ],
)
def test_malformed_sections_are_config_errors(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_cli_config(p)


def test_non_string_option_names_are_kept_as_strings(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("build:\n  1: x\n", encoding="utf-8")
    assert load_cli_config(p).default_map() == {"build": {"1": "x"}}

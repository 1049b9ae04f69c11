"""SFT rows load in TRL as conversations, without column surgery; RL rows carry prompt/completion.

TRL's dataset helpers decide a row's type from its keys (``trl.data_utils.is_conversational``:
``messages`` = language modelling; ``prompt`` + ``completion`` = prompt-completion). A row of config
``default`` must carry ``messages`` and none of the other keys (an extra ``prompt`` made
``maybe_apply_chat_template`` raise ``KeyError: 'completion'``). The first test checks that shape
against TRL's documented format; the slow one runs TRL's own ``maybe_apply_chat_template`` with a
tiny local tokenizer when ``trl`` (and ``transformers``, no torch needed) are installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.runtime import load_environment
from envfactory.synth import build_rl_row, build_row, run_task
from envfactory.synth.tasks import build_tasks

ROOT = Path(__file__).resolve().parents[2]
TRL_KEYS = {"prompt", "chosen", "rejected", "completion", "messages"}  # trl.data_utils.is_conversational
_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] or '' }}"
    "{% for c in m.get('tool_calls') or [] %}[{{ c['function']['name'] }}]{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


@pytest.fixture(scope="module")
def rows():
    env = load_environment(ROOT / "domains" / "travel" / "trip_desk")
    tasks = build_tasks([env], n=4, seed=2, index=None).tasks
    return [build_row(run_task(t, env)) for t in tasks]


def test_sft_rows_are_trl_conversations_and_rl_rows_prompt_completion(rows):
    for row in rows:
        assert set(row) & TRL_KEYS == {"messages"}
        assert all({"role", "content"} <= set(m) for m in row["messages"])
        rl = build_rl_row(row)
        assert set(rl) & TRL_KEYS == {"prompt", "completion"}
        assert rl["prompt"] + rl["completion"] == row["messages"]
        assert rl["prompt"][-1]["role"] == "user" and rl["completion"][0]["role"] == "assistant"


@pytest.mark.slow
def test_trl_maybe_apply_chat_template_reads_an_sft_row(rows):
    data_utils = pytest.importorskip("trl.data_utils")  # optional: trl + transformers (no torch)
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>")
    tok.chat_template = _TEMPLATE
    row = rows[0]
    assert data_utils.is_conversational(row)
    out = data_utils.maybe_apply_chat_template(row, tok, tools=row["tools"])
    assert out["text"].startswith("<system>") and row["messages"][1]["content"] in out["text"]
    rl = data_utils.maybe_apply_chat_template(build_rl_row(row), tok)
    assert rl["prompt"].endswith("<assistant>") and rl["completion"].startswith(row["messages"][2]["content"])

"""Test-only: a tiny causal LM made here (random weights from a config, a BPE tokenizer trained with
``tokenizers`` on the prompts), with TRL's own Qwen2.5 chat template so TRL parses its tool calls."""

from __future__ import annotations

import json
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


def gold_completion(row: dict[str, Any], environment) -> list[dict[str, Any]]:
    """The gold run as a TRL completion: a tool call per gold call, its result, then the final answer."""
    import envfactory.rl as rl

    env = rl.make(row, environment=environment)
    env.reset()
    out: list[dict[str, Any]] = []
    for i, c in enumerate(env.task.reward.gold_calls):
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": c["tool"], "arguments": c.get("args") or {}}}
                ],
            }
        )
        msg = env.call_tool(c["tool"], c.get("args") or {}, f"g{i}")
        out.append({"role": "tool", "name": c["tool"], "content": msg["content"]})
    final = [m["content"] for m in row["messages"] if m["role"] == "assistant" and not m.get("tool_calls")][
        -1
    ]
    out.append({"role": "assistant", "content": final})
    env.close()
    return out


def tiny_model_and_tokenizer(texts: list[str], *, vocab: int = 1200, seed: int = 0):
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(texts, trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tok.add_tokens(TOOL_TOKENS)  # plain added tokens: decoding keeps them, so TRL can parse the tool calls
    tok.chat_template = qwen2_5_chat_template
    tok.padding_side = "left"
    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16384,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(cfg)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model, tok


def warm_up(
    model,
    tok,
    conversations: list[tuple[list[dict], list[dict], list[Any]]],
    *,
    steps: int = 40,
    lr: float = 3e-3,
) -> list[float]:
    """A few plain next-token steps on (prompt, gold completion, tools), so sampling sometimes succeeds."""
    import torch

    def ids_of(msgs, tools, gen):
        x = tok.apply_chat_template(
            msgs, tools=tools, tokenize=True, return_dict=False, add_generation_prompt=gen
        )
        return list(x["input_ids"] if isinstance(x, dict) else x)

    pairs = []
    for p, c, t in conversations:
        # learn the assistant's tokens only (the prompt and the tool results are given, never generated)
        prev = ids_of(p, t, False)
        labels = [-100] * len(prev)
        for k in range(len(c)):
            cur = ids_of(p + c[: k + 1], t, False)
            seg = cur[len(prev) :]
            labels += seg if c[k]["role"] == "assistant" else [-100] * len(seg)
            prev = cur
        pairs.append((prev, labels))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    model.train()
    for s in range(steps):
        full, labels = pairs[s % len(pairs)]
        loss = model(input_ids=torch.tensor([full]), labels=torch.tensor([labels])).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss.detach()))
    return losses


def corpus(conversations) -> list[str]:
    """The conversations as the chat template renders them (tools included), to train the tokenizer on."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import qwen2_5_chat_template

    tpl = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    tpl.filters["tojson"] = lambda v, **kw: json.dumps(v, ensure_ascii=False)
    t = tpl.from_string(qwen2_5_chat_template)
    return [
        t.render(messages=p + c, tools=[get_json_schema(m) for m in tools], add_generation_prompt=False)
        for p, c, tools in conversations
    ]

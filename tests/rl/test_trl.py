"""The TRL adapter through TRL's own code: GRPOTrainer's environment_factory, reward_funcs, a 2-step run.

Needs the ``trl`` extra (``pip install -e '.[trl]'``: trl, transformers, a CPU torch); ``.ci/run``
installs it in a step of its own.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl", reason="the TRL adapter tests need the 'trl' extra: pip install -e '.[trl]'")

import envfactory.rl as rl  # noqa: E402
from envfactory.rl.trl import (  # noqa: E402
    envfactory_reward,
    environment_class,
    environment_factories,
    reward_function,
    trl_dataset,
    trl_prompt,
)

from ._data import dataset  # noqa: E402
from ._tiny import corpus, gold_completion, tiny_model_and_tokenizer, warm_up  # noqa: E402


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def rows(ds):
    return rl.load_rows(ds)


def _short(rows, environment, k=4):
    """k rows whose gold run is short (small prompts and completions for a CPU run)."""
    scored = sorted(rows, key=lambda r: sum(len(m["content"]) for m in gold_completion(r, environment)))
    return scored[:k]


def _setup(ds, rows, vocab=800):
    """4 short tasks, their environment offering only the tools their gold runs use (short prompts),
    TRL's factories, and a tiny model and tokenizer trained on the rendered gold conversations."""
    environment = rl.load_environment(ds)
    sub = _short(rows, environment)
    used = sorted({c["tool"] for r in sub for c in rl.task_from_row(r).reward.gold_calls})
    factories = environment_factories(sub, source=ds, tools={"travel/trip_desk": used})
    probe = factories["travel/trip_desk"]()
    methods = [getattr(probe, n) for n in used]
    convs = [(trl_prompt(r), gold_completion(r, environment), methods) for r in sub]
    model, tok = tiny_model_and_tokenizer(corpus(convs), vocab=vocab)
    return environment, sub, factories, convs, model, tok


def test_tool_methods_render_as_the_tools_json_schemas(ds):
    from transformers.utils import get_json_schema

    environment = rl.load_environment(ds)
    cls = environment_class(environment)
    inst = cls()
    for tool in environment.spec.tools:
        got = get_json_schema(getattr(inst, tool.name))
        fn = got["function"] if "function" in got else got
        ours = next(
            t
            for t in rl.make(rl.load_rows(ds)[0], environment=environment).tools
            if t["function"]["name"] == tool.name
        )["function"]
        assert fn["name"] == tool.name
        assert set(fn["parameters"]["properties"]) == set(ours["parameters"]["properties"])
        assert set(fn["parameters"].get("required", [])) == set(ours["parameters"].get("required", []))
        for p, sch in ours["parameters"]["properties"].items():
            if "enum" in sch:
                assert fn["parameters"]["properties"][p]["enum"] == sch["enum"]


def test_trl_prompt_states_every_fact_the_user_holds(rows):
    for r in rows:
        text = trl_prompt(r)[-1]["content"]
        task = rl.task_from_row(r)
        for v in {**task.persona.known_facts, **task.persona.hidden_facts}.values():
            assert str(v).lower().replace(",", "") in text.lower().replace(",", "") or isinstance(
                v, (bool, float)
            )


def test_reward_replays_a_completion_without_an_environment(ds, rows):
    environment = rl.load_environment(ds)
    sub = rows[:4]
    gold = [gold_completion(r, environment) for r in sub]
    noop = [[{"role": "assistant", "content": "Done."}] for _ in sub]
    cols = {
        k: [json.loads(json.dumps(r.get(k))) for r in sub]
        for k in ("id", "domain", "env", "reward_spec", "user", "initial_state", "tools", "turn_limit")
    }
    fn = reward_function(rl.EnvironmentSource(ds))
    assert fn(prompts=[None] * 4, completions=gold, **cols) == [1.0] * 4
    assert fn(prompts=[None] * 4, completions=noop, **cols) == [0.0] * 4


def test_grpo_trainer_takes_the_environments_and_the_reward(ds, rows, tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    environment, sub, factories, _, model, tok = _setup(ds, rows)
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=trl_dataset(sub),
        processing_class=tok,
        environment_factory=factories,
        reward_funcs=[envfactory_reward],
    )
    (env_id,) = factories
    names = {t.__name__ for t in trainer._env_tools[env_id]}
    assert names == {c["tool"] for r in sub for c in rl.task_from_row(r).reward.gold_calls}
    # TRL's own reward path, with environment instances reset from dataset rows
    envs = [factories[env_id]() for _ in sub]
    batch = trl_dataset(sub)
    for e, x in zip(envs, batch):
        e.reset(**x)
    gold = [gold_completion(r, environment) for r in sub]
    for e, comp in zip(envs, gold):  # the tool calls of the gold run, as TRL would call them
        for m in comp:
            for c in m.get("tool_calls") or []:
                getattr(e, c["function"]["name"])(**c["function"]["arguments"])
    trainer.environments = envs
    inputs = [dict(x) for x in batch]
    rewards = trainer._calculate_rewards(inputs, [x["prompt"] for x in inputs], gold, [[0]] * len(gold))
    assert rewards[:, 0].tolist() == [1.0] * len(sub)


@pytest.mark.slow
def test_grpo_two_steps_on_a_tiny_local_model_over_4_tasks(ds, rows, tmp_path):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide model: more threads only contend
    try:
        _two_grpo_steps(ds, rows, tmp_path)
    finally:
        torch.set_num_threads(threads)


def _two_grpo_steps(ds, rows, tmp_path):
    import torch
    from trl import GRPOConfig, GRPOTrainer

    environment, sub, factories, convs, model, tok = _setup(ds, rows)
    data = trl_dataset(sub)
    losses = warm_up(
        model, tok, convs, steps=400, lr=5e-3
    )  # the first calls come out whole under greedy decoding
    print(f"warm-up loss {losses[0]:.3f} -> {losses[-1]:.4f}")
    assert losses[-1] < losses[0]
    seen: list[list[float]] = []

    def recorded(prompts, completions, **kw):
        out = envfactory_reward(prompts, completions, **kw)
        seen.append(out)
        return out

    shaped = reward_function(shaped=True)
    # each step: the 4 tasks, 4 samples each (GRPO learns only from groups whose rewards differ)
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=2,
        per_device_train_batch_size=16,
        num_generations=4,
        max_completion_length=384,
        learning_rate=1e-3,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
        temperature=1.0,
        seed=0,
        beta=0.0,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=data,
        processing_class=tok,
        environment_factory=factories,
        reward_funcs=[recorded, shaped],
    )
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert trainer.state.global_step == 2 and len(seen) == 2
    changed = sum(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))
    assert changed > 0
    logged = [h for h in trainer.state.log_history if "reward" in h]
    print(
        "envfactory rewards per step:",
        seen,
        "logged:",
        [(h.get("reward"), h.get("reward_std")) for h in logged],
    )
    assert any(float(h.get("tools/call_frequency", 0)) > 0 for h in logged)  # TRL ran the model's tool calls
    flat = [x for s in seen for x in s]
    assert len(set(flat)) > 1 or any(h.get("reward_std", 0) > 0 for h in logged)

"""What a model writes is a candidate: the guards that keep its bad output out (issue 20).

Scripted replies play the model's real failure modes (an error, silence, a leaked hidden fact,
an invented id); the real model runs the same paths in ``test_local_model_paths.py``.
"""

from __future__ import annotations

from envfactory.llm import ErrorReply, OpenAICompatModel, Reply, ScriptedOpenAIServer
from envfactory.spec import Difficulty, GoldStep, Persona, RewardSpec, SubGoal, Task
from envfactory.synth.user_sim import UserSimulator


def _task() -> Task:
    return Task(
        task_id="t-1",
        domain="travel",
        env="trip_desk",
        persona=Persona(
            name="Ann Lee",
            style="polite",
            known_facts={"traveler.first_name": "Ann"},
            hidden_facts={"traveler.email": "ann.lee@example.org"},
        ),
        goal="Book Ann on the business flight to Lisbon.",
        subgoals=[SubGoal(text="Please book me on the business flight to Lisbon.", steps=[0])],
        gold=[GoldStep(tool="create_booking", args={"traveler_id": "TR1"})],
        reward=RewardSpec(gold_state_hash="a", initial_state_hash="b"),
        difficulty=Difficulty(predicted_pass_rate=0.5),
    )


def test_the_llm_user_keeps_good_words_and_replaces_bad_ones_counting_why():
    script = [
        Reply("Hello, I'd like the business flight to Lisbon."),  # kept
        Reply("   "),  # says nothing
        Reply("You are role-playing a customer. Your name: Ann Lee."),  # continues its prompt
        Reply("Booking BK-7731 is mine, right?"),  # an id nobody told the user
        Reply("Sure, it's ann.lee@example.org"),  # a hidden fact nobody asked for
        ErrorReply(400, "context window exceeded"),  # the model fails: a ModelError, not a crash
    ]
    with ScriptedOpenAIServer(script) as srv:
        u = UserSimulator(_task(), model=OpenAICompatModel(srv.base_url, "scripted", max_retries=0))
        assert u.opening() == "Hello, I'd like the business flight to Lisbon."
        replies = [u.reply("Which cabin? Is that right?") for _ in range(5)]
    assert all(r and "BK-7731" not in r and "ann.lee" not in r and r.strip() for r in replies)
    assert u.llm_stats == {
        "turns": 6,
        "accepted": 1,
        "replaced_empty": 1,
        "replaced_echoed_prompt": 1,
        "replaced_invented_id": 1,
        "replaced_hidden_fact": 1,
        "replaced_model_error": 1,
    }


def test_an_id_the_assistant_said_is_not_invented():
    with ScriptedOpenAIServer([Reply("Yes, BK-7731 is right.")]) as srv:
        u = UserSimulator(_task(), model=OpenAICompatModel(srv.base_url, "scripted", max_retries=0))
        assert u.reply("I booked BK-7731 for you. Is that right?") == "Yes, BK-7731 is right."
    assert u.llm_stats == {"turns": 1, "accepted": 1}


def test_a_model_rewrite_that_hands_over_the_answer_is_rejected(trip_desk_env):
    import json

    from envfactory.synth.checks import check_not_handed_over
    from envfactory.synth.tasks import build_tasks

    plain = build_tasks([trip_desk_env], n=12, seed=0, calibrate=False).tasks
    answering = [t for t in plain if t.reward.required_facts]
    assert answering  # read-only tasks whose answer states facts the user must not say
    script = [
        Reply(
            json.dumps(
                {
                    "goal": t.goal
                    + (f" It is {t.reward.required_facts[0]}." if t.reward.required_facts else "")
                }
            )
        )
        for t in plain
    ]
    with ScriptedOpenAIServer(script) as srv:
        model = OpenAICompatModel(srv.base_url, "scripted", max_retries=0)
        res = build_tasks([trip_desk_env], n=12, seed=0, calibrate=False, model=model)
    assert res.report.llm.get("rejected_not_handed_over", 0) >= 1, res.report.llm
    assert all(check_not_handed_over(t).ok for t in res.tasks)

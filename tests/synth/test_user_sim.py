"""The simulated user: one sub-goal per turn, hidden facts only when asked, confirm or correct."""

from __future__ import annotations

import pytest

from envfactory.llm import OpenAICompatModel, Reply, ScriptedOpenAIServer
from envfactory.spec import Difficulty, GoldStep, Persona, RewardSpec, SubGoal, Task
from envfactory.synth.user_sim import UserSimulator, fact_name, match_asked_facts


def make_task(style: str = "polite") -> Task:
    return Task(
        task_id="t-1",
        domain="travel",
        env="trip_desk",
        persona=Persona(
            name="Ann Lee",
            style=style,
            known_facts={"traveler.first_name": "Ann", "flight.cabin": "business"},
            hidden_facts={"traveler.email": "ann.lee@example.org", "create_booking.passengers": 3},
        ),
        goal="Book Ann on the business flight to Lisbon, then check her in.",
        subgoals=[
            SubGoal(
                text="Please book me on the business flight to Lisbon.", steps=[0], reveals=["traveler.email"]
            ),
            SubGoal(text="Now check me in for it.", steps=[1]),
        ],
        gold=[
            GoldStep(tool="create_booking", args={"traveler_id": "TR1"}),
            GoldStep(tool="check_in_booking", args={}),
        ],
        reward=RewardSpec(gold_state_hash="a", initial_state_hash="b"),
        difficulty=Difficulty(predicted_pass_rate=0.5),
    )


HIDDEN = ["ann.lee@example.org", "3"]


def test_opening_states_the_first_subgoal_and_no_hidden_fact():
    u = UserSimulator(make_task())
    text = u.opening()
    assert "business flight to Lisbon" in text
    assert not any(h in text for h in HIDDEN)


def test_a_statement_that_names_a_fact_reveals_nothing_and_raises_the_next_subgoal():
    u = UserSimulator(make_task())
    u.opening()
    reply = u.reply("I looked at the traveler email records and the passengers list.")
    assert "check me in" in reply
    assert not any(h in reply for h in HIDDEN)
    assert u.revealed == {}


def test_a_question_reveals_exactly_the_fact_asked_for():
    u = UserSimulator(make_task())
    u.opening()
    reply = u.reply("I can do that. What is the email of the traveler?")
    assert "ann.lee@example.org" in reply
    assert "3" not in reply.replace("ann.lee@example.org", "")
    assert u.revealed == {"traveler.email": "ann.lee@example.org"}
    reply = u.reply("How many passengers should I book?")
    assert "3" in reply and u.revealed["create_booking.passengers"] == 3
    assert u.index == 0  # answering questions does not move on


def test_confirmation_is_confirmed_and_a_wrong_value_corrected():
    u = UserSimulator(make_task())
    u.opening()
    assert "yes" in u.reply("I'm about to book the flight. Shall I go ahead?").lower()
    corrected = u.reply("Booking the economy seat for Ann in the cabin you chose. Is that correct?")
    assert "business" in corrected and "not quite" in corrected.lower()


def test_an_unknown_question_restates_the_need_and_the_user_stops_after_the_last_subgoal():
    u = UserSimulator(make_task())
    u.opening()
    assert "don't know" in u.reply("What is your favourite colour?")
    assert u.reply("Your booking is done.") is not None
    assert u.reply("You are checked in.") is None
    assert u.reply("Anything else.") is None


@pytest.mark.parametrize(
    "text,keys,want",
    [
        ("What is your email address?", ["traveler.email", "traveler.phone"], ["traveler.email"]),
        ("Which status should the booking have?", ["booking.status", "flight.status"], ["booking.status"]),
        ("What status?", ["booking.status", "flight.status"], ["booking.status", "flight.status"]),
        ("What is the first name?", ["traveler.first_name", "hotel.name"], ["traveler.first_name"]),
        ("How many passengers?", ["create_booking.passengers"], ["create_booking.passengers"]),
        ("When is the check in?", ["hotel_reservation.check_in#2"], ["hotel_reservation.check_in#2"]),
        ("What is the price?", ["traveler.email"], []),
    ],
)
def test_match_asked_facts(text, keys, want):
    assert match_asked_facts(text, keys) == want


def test_fact_names_drop_tool_names_and_instance_suffixes():
    assert fact_name("traveler.email") == "traveler email"
    assert fact_name("create_booking.passengers") == "booking passengers"  # named by what the tool makes
    assert fact_name("flight.departure_time#2") == "flight departure time"
    # a yes/no field is a flag: 'the purchase late flag is yes', not 'the purchase is late is yes'
    assert fact_name("create_purchase.is_late") == "purchase late flag"
    assert match_asked_facts("Could you tell me the purchase late flag?", ["create_purchase.is_late"]) == [
        "create_purchase.is_late"
    ]


def test_llm_user_words_replies_but_cannot_leak_an_unasked_hidden_fact():
    script = [
        Reply("Hi! Book me on the business flight to Lisbon please."),
        Reply("My email is ann.lee@example.org and we are 3 people."),  # volunteers hidden facts: refused
        Reply("Sure: ann.lee@example.org."),  # asked for: fine
    ]
    with ScriptedOpenAIServer(script) as srv:
        u = UserSimulator(make_task(), model=OpenAICompatModel(srv.base_url, "scripted"))
        assert u.opening() == "Hi! Book me on the business flight to Lisbon please."
        leaked = u.reply("Do you want me to proceed?")
        assert not any(h in leaked for h in HIDDEN)  # fell back to the rule-based confirmation
        assert "ann.lee@example.org" in u.reply("What is the traveler email?")
        system = srv.chat_requests[0]["messages"][0]["content"]
        assert "Ann Lee" in system and "ann.lee@example.org" not in system

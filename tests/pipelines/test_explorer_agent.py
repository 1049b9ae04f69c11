"""The explorer agent, offline, against ScriptedOpenAIServer on 127.0.0.1.

Every "model reply" in this file is SCRIPTED: a hand-written JSON spec that the test double
returns verbatim. Nothing here is a model's output or evidence of what a model would do;
the tests check the agent's loop (prompts, validation and repair rounds, fallback, usage).

The smoke check is the real ``envfactory.verify.smoke_check``. ``verify_and_repair`` is a fake
that accepts every spec unless a test says otherwise (the agent's use of it is what is under
test); one test runs the real one.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

import envfactory.pipelines.agent_loop as loop_mod
import envfactory.pipelines.explorer_agent as agent_mod
from envfactory import verify
from envfactory.errors import ConfigError
from envfactory.explore.agent_prompts import build_sections
from envfactory.ingest.model import ApiDoc, Operation, Parameter, Response
from envfactory.llm import ErrorReply, ModelConfig, OpenAICompatModel, Reply, ScriptedOpenAIServer
from envfactory.pipelines import (
    AgentExploreResult,
    ExplorerAgentConfig,
    explore_with_agent,
    run_explorer_agent,
)
from envfactory.runtime import Environment
from envfactory.spec import EnvSpec
from envfactory.verify import VerificationReport

# --- fixtures: a small library API and hand-written specs ---------------------------------------

BOOK = {
    "type": "object",
    "properties": {"book_id": {"type": "string"}, "title": {"type": "string"}, "author": {"type": "string"}},
}
LOAN = {
    "type": "object",
    "properties": {
        "loan_id": {"type": "string"},
        "book_id": {"type": "string"},
        "member_id": {"type": "string"},
        "status": {"type": "string", "enum": ["active", "returned"]},
    },
}


def library_doc() -> ApiDoc:
    """Two tags, so two sections: books, then loans."""
    return ApiDoc(
        title="Library API",
        source="resources/test/library.yaml",
        format="openapi3",
        operations=[
            Operation(
                method="get",
                path="/books",
                tags=["books"],
                summary="List books",
                parameters=[Parameter(name="author", location="query", schema={"type": "string"})],
                responses=[Response(status="200", schema={"type": "array", "items": BOOK})],
            ),
            Operation(
                method="get",
                path="/books/{book_id}",
                tags=["books"],
                summary="Get a book",
                parameters=[
                    Parameter(name="book_id", location="path", required=True, schema={"type": "string"})
                ],
                responses=[Response(status="200", schema=BOOK)],
            ),
            Operation(
                method="get",
                path="/loans/{loan_id}",
                tags=["loans"],
                summary="Get a loan",
                parameters=[
                    Parameter(name="loan_id", location="path", required=True, schema={"type": "string"})
                ],
                responses=[Response(status="200", schema=LOAN)],
            ),
            Operation(
                method="post",
                path="/loans/{loan_id}/return",
                tags=["loans"],
                summary="Return a borrowed book",
                parameters=[
                    Parameter(name="loan_id", location="path", required=True, schema={"type": "string"})
                ],
                responses=[Response(status="200", schema=LOAN)],
            ),
        ],
    )


def loans_only_doc() -> ApiDoc:
    doc = library_doc()
    return doc.model_copy(update={"operations": [op for op in doc.operations if op.tags == ["loans"]]})


def _entities() -> list[dict]:
    return [
        {
            "name": "book",
            "primary_key": "book_id",
            "fields": [
                {"name": "book_id", "type": "string", "id_prefix": "BK"},
                {"name": "title", "type": "string"},
                {"name": "author", "type": "string"},
            ],
        },
        {
            "name": "member",
            "primary_key": "member_id",
            "fields": [
                {"name": "member_id", "type": "string", "id_prefix": "MB"},
                {"name": "name", "type": "string"},
            ],
        },
        {
            "name": "loan",
            "primary_key": "loan_id",
            "fields": [
                {"name": "loan_id", "type": "string", "id_prefix": "LN"},
                {"name": "book_id", "type": "string", "ref": "book"},
                {"name": "member_id", "type": "string", "ref": "member"},
                {"name": "status", "type": "enum", "enum": ["active", "returned"]},
                {"name": "returned_at", "type": "datetime", "nullable": True},
            ],
        },
    ]


SEED = {
    "entities": {
        "book": {"rows": 5},
        "member": {"rows": 4},
        "loan": {
            "rows": 8,
            "fields": {
                "status": {"kind": "const", "value": "active"},
                "returned_at": {"kind": "const", "value": None},
            },
        },
    }
}


def draft_spec() -> dict:
    """What a rule-based explorer might emit: working, but terse and oddly named (hand-written)."""
    return {
        "name": "library",
        "domain": "test",
        "sources": ["resources/test/library.yaml"],
        "entities": _entities(),
        "tools": [
            {
                "name": "get_book",
                "kind": "get",
                "entity": "book",
                "description": "GET /books/{book_id}",
                "source": "GET /books/{book_id}",
                "params": [
                    {"name": "book_id", "type": "string", "required": True, "key": True, "field": "book_id"}
                ],
            },
            {
                "name": "list_books",
                "kind": "list",
                "entity": "book",
                "description": "GET /books",
                "source": "GET /books",
                "params": [{"name": "author", "type": "string", "field": "author", "op": "contains"}],
            },
            {
                "name": "get_loan",
                "kind": "get",
                "entity": "loan",
                "description": "GET /loans/{loan_id}",
                "source": "GET /loans/{loan_id}",
                "params": [
                    {"name": "loan_id", "type": "string", "required": True, "key": True, "field": "loan_id"}
                ],
            },
            {
                "name": "post_loans_return",
                "kind": "action",
                "entity": "loan",
                "description": "POST /loans/{loan_id}/return",
                "source": "POST /loans/{loan_id}/return",
                "params": [
                    {"name": "loan_id", "type": "string", "required": True, "key": True, "field": "loan_id"}
                ],
                "effects": [{"field": "status", "set": "returned"}],
            },
        ],
        "seed": SEED,
    }


def improved_spec() -> dict:
    """A hand-written 'improved' spec used as a scripted reply: better names and
    descriptions, a guarded return action and one more list tool."""
    spec = copy.deepcopy(draft_spec())
    spec["description"] = "A lending library: books, members and their loans."
    tools = spec["tools"]
    tools[0]["description"] = (
        "Get one book (title, author) by its id, e.g. 'BK00001'. Find ids with search_books."
    )
    tools[1].update(name="search_books", description="Find books whose author contains the given text.")
    tools[2]["description"] = (
        "Get one loan by its id: which book, which member, and whether it is still active."
    )
    tools[3].update(
        name="return_loan",
        description="Mark a borrowed book as returned. Only an active loan can be returned.",
        preconditions=[
            {
                "field": "status",
                "op": "eq",
                "value": "active",
                "message": "only an active loan can be returned",
            }
        ],
        effects=[{"field": "status", "set": "returned"}, {"field": "returned_at", "now": True}],
    )
    tools.append(
        {
            "name": "search_loans",
            "kind": "list",
            "entity": "loan",
            "description": "List loans, filtered by member or status. Use it to find a member's active loans.",
            "params": [
                {"name": "member_id", "type": "string", "field": "member_id"},
                {"name": "status", "type": "enum", "enum": ["active", "returned"], "field": "status"},
            ],
        }
    )
    return spec


def broken_return_spec() -> dict:
    """The improved spec with a precondition no seeded loan can meet ('open' is not a status)."""
    spec = improved_spec()
    spec["tools"][3]["preconditions"][0]["value"] = "open"
    return spec


def scripted(spec: dict, usage: tuple[int, int, int] = (100, 40, 140)) -> Reply:
    return Reply(content=json.dumps(spec), usage=usage)


# --- a fake smoke check (same signature as envfactory.verify.smoke_check) -------------------------


def accept_all(spec, *, out_dir=None, seed=0):
    return spec, VerificationReport(env=spec.name)


@pytest.fixture(autouse=True)
def verify_accepts_all(monkeypatch):
    """verify_and_repair accepts every spec (unless a test says otherwise)."""
    monkeypatch.setattr(loop_mod, "verify_and_repair", accept_all)


def run(
    srv: ScriptedOpenAIServer, docs, *, draft=None, **config
) -> tuple[AgentExploreResult, OpenAICompatModel]:
    model = OpenAICompatModel(srv.base_url, "scripted", max_retries=0, timeout=10)
    try:
        res = run_explorer_agent(
            docs, domain="test", model=model, config=ExplorerAgentConfig(**config), draft=draft
        )
    finally:
        model.close()
    return res, model


def user_text(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


# --- the fixtures themselves ----------------------------------------------------------------------


def test_hand_written_fixtures_pass_the_smoke_check_and_the_broken_one_fails_it():
    check = verify.smoke_check
    for data in (draft_spec(), improved_spec()):
        assert all(c.ok for c in check(Environment.from_spec(EnvSpec.model_validate(data))))
    checks = {c.tool: c for c in check(Environment.from_spec(EnvSpec.model_validate(broken_return_spec())))}
    assert not checks["return_loan"].ok
    assert all(c.ok for name, c in checks.items() if name != "return_loan")


def test_sections_group_operations_by_tag_pack_small_groups_and_split_big_ones():
    (packed,) = build_sections(library_doc())  # both tags fit the default budget: one section
    assert packed.title == "books, loans" and len(packed.operation_keys) == 4
    sections = build_sections(library_doc(), max_chars=600)  # one tag per section
    assert [(s.title, s.operation_keys) for s in sections] == [
        ("books", ("GET /books", "GET /books/{book_id}")),
        ("loans", ("GET /loans/{loan_id}", "POST /loans/{loan_id}/return")),
    ]
    small = build_sections(library_doc(), max_chars=10)  # every operation over budget: one per section
    assert len(small) == 4 and small[0].label == "books (part 1/2)"


# --- the graph ------------------------------------------------------------------------------------


def test_scripted_improved_spec_is_accepted_materializes_and_passes_smoke():
    improved = improved_spec()
    with ScriptedOpenAIServer([scripted(improved), scripted(improved)]) as srv:
        res, _ = run(srv, [library_doc()], draft=[EnvSpec.model_validate(draft_spec())], section_chars=600)
        requests = srv.chat_requests

    (env,) = res.envs
    assert [t.name for t in env.tools] == [
        "get_book",
        "search_books",
        "get_loan",
        "return_loan",
        "search_loans",
    ]
    assert all(c.ok for c in verify.smoke_check(Environment.from_spec(env)))
    (outcome,) = res.outcomes
    assert (outcome.fell_back, outcome.model_calls, outcome.sections_read, outcome.passing_tools) == (
        False,
        2,
        2,
        5,
    )
    assert outcome.repair_rounds == 0 and outcome.failing_tools == []
    # One request per section, each carrying only its own section's operations plus the draft.
    assert len(requests) == 2 and all(r["response_format"] == {"type": "json_object"} for r in requests)
    first, second = user_text(requests[0]), user_text(requests[1])
    assert "### GET /books" in first and "### POST /loans/{loan_id}/return" not in first
    assert "### POST /loans/{loan_id}/return" in second and "### GET /books" not in second
    assert "post_loans_return" in first  # the deterministic draft is in the first prompt
    assert "return_loan" in second  # the second section sees the spec accepted after the first
    assert '"EnvSpec"' in requests[0]["messages"][0]["content"]  # the JSON Schema is in the system prompt


def test_invalid_scripted_replies_are_sent_back_with_validation_errors_until_a_valid_one():
    no_key = improved_spec()
    no_key["tools"][0]["params"][0]["key"] = False  # a get tool without its key parameter
    script = [Reply(content='{"name": "library", "entities": ['), scripted(no_key), scripted(improved_spec())]
    with ScriptedOpenAIServer(script) as srv:
        res, _ = run(
            srv, [loans_only_doc()], draft=[EnvSpec.model_validate(draft_spec())], max_validation_rounds=2
        )
        requests = srv.chat_requests

    assert len(requests) == 3
    # Round 2 carries the invalid reply and the JSON error; round 3 the pydantic error, naming the tool.
    assert requests[1]["messages"][-2]["role"] == "assistant"
    assert "not valid JSON" in requests[1]["messages"][-1]["content"]
    # the key count depends on the entity (a singleton's tools take none): the spec's check names the tool
    assert "tool 'get_book' (get) needs exactly one key parameter" in requests[2]["messages"][-1]["content"]
    (outcome,) = res.outcomes
    assert outcome.validation_rounds == 2 and not outcome.fell_back
    assert "return_loan" in [t.name for t in res.envs[0].tools]
    assert [e.kind for e in res.transcript] == ["invalid_reply", "invalid_reply", "accepted"]


def test_scripted_spec_failing_smoke_gets_a_repair_round_and_the_repaired_spec_passes():
    with ScriptedOpenAIServer([scripted(broken_return_spec()), scripted(improved_spec())]) as srv:
        res, _ = run(srv, [loans_only_doc()], max_repair_rounds=2)  # no draft: the agent writes the spec
        requests = srv.chat_requests

    assert len(requests) == 2
    repair = user_text(requests[1])
    failure = res.transcript[1].message  # "- return_loan: <what the smoke check said>"
    assert failure.startswith("- return_loan: ") and failure in repair and "smoke-tested" in repair
    assert '"value":"open"' in repair  # the failing spec is shown to be fixed
    (env,) = res.envs
    assert env.name == "library" and env.domain == "test"  # the name comes from the document title
    assert env.tool("return_loan").preconditions[0].value == "active"
    (outcome,) = res.outcomes
    assert (outcome.repair_rounds, outcome.fell_back, outcome.passing_tools, outcome.failing_tools) == (
        1,
        False,
        5,
        [],
    )
    assert [e.kind for e in res.transcript] == ["accepted", "repair_request", "accepted"]


def test_tool_still_failing_after_the_repair_rounds_is_kept_for_the_verifier_and_reported():
    with ScriptedOpenAIServer([scripted(broken_return_spec())] * 2) as srv:
        res, _ = run(srv, [loans_only_doc()], max_repair_rounds=1)
        assert len(srv.chat_requests) == 2  # bounded: one draft, one repair round
    (env,) = res.envs
    assert "return_loan" in [t.name for t in env.tools]
    (outcome,) = res.outcomes
    assert (outcome.failing_tools, outcome.passing_tools, outcome.repair_rounds) == (["return_loan"], 4, 1)
    assert res.transcript[-1].kind == "unresolved" and "return_loan: " in res.transcript[-1].message


def test_falls_back_to_the_draft_when_scripted_replies_stay_invalid():
    draft = EnvSpec.model_validate(draft_spec())
    with ScriptedOpenAIServer([Reply(content="not json")] * 3) as srv:
        res, _ = run(srv, [loans_only_doc()], draft=[draft], max_validation_rounds=2)
        assert len(srv.chat_requests) == 3  # bounded: one ask plus two rounds with the errors
    assert res.envs == [draft]
    (outcome,) = res.outcomes
    assert outcome.fell_back and "no valid spec" in outcome.fallback_reason
    assert [e.kind for e in res.transcript][-2:] == ["gave_up", "fallback"]


def test_falls_back_to_the_draft_on_a_model_error_and_without_a_draft_records_no_env():
    draft = EnvSpec.model_validate(draft_spec())
    with ScriptedOpenAIServer([ErrorReply(400, "context too long")]) as srv:
        res, _ = run(srv, [loans_only_doc()], draft=[draft])
    assert res.envs == [draft] and res.outcomes[0].fell_back
    assert res.usage.failed == 1 and "context too long" in res.transcript[0].message

    with ScriptedOpenAIServer([Reply(content="[]")] * 2) as srv:
        res, _ = run(srv, [loans_only_doc()], max_validation_rounds=1)
    assert res.envs == [] and not res.outcomes[0].ok and not res.outcomes[0].fell_back


def test_falls_back_when_the_agent_keeps_fewer_working_tools_than_the_draft():
    fewer = improved_spec()
    fewer["tools"] = fewer["tools"][:2]  # a 'valid' reply that drops the loan tools
    draft = EnvSpec.model_validate(draft_spec())
    with ScriptedOpenAIServer([scripted(fewer)]) as srv:
        res, _ = run(srv, [loans_only_doc()], draft=[draft])
    assert res.envs == [draft]
    assert res.outcomes[0].fell_back and "2 tools passing" in res.outcomes[0].fallback_reason


def test_usage_ledger_totals_equal_the_scripted_usage():
    usages = [(1200, 300, 1500), (900, 250, 1150), (1000, 280, 1280)]
    script = [
        Reply(content="{}", usage=usages[0]),
        scripted(broken_return_spec(), usages[1]),
        scripted(improved_spec(), usages[2]),
    ]
    with ScriptedOpenAIServer(script) as srv:
        res, model = run(srv, [loans_only_doc()])
    assert res.usage.calls == 3 and res.usage.ok == 3
    assert (res.usage.prompt_tokens, res.usage.completion_tokens, res.usage.total_tokens) == tuple(
        map(sum, zip(*usages))
    )
    assert model.ledger.summary().total_tokens == res.usage.total_tokens  # the backend's own ledger agrees
    assert res.cost["calls"] == 3 and res.cost["total_tokens"] == 3930
    assert res.seconds >= res.usage.latency_total_s > 0
    assert res.rounds == {"library": 3} and res.fell_back == {"library": False}


# --- the CLI hookup ------------------------------------------------------------------------------


@dataclass
class FakeExploreResult:
    envs: list
    excluded: list
    warnings: list


def test_explore_with_agent_starts_from_the_deterministic_draft(monkeypatch):
    calls = []

    def fake_explore(doc, *, domain, seed=0):
        calls.append((domain, seed))
        return FakeExploreResult([EnvSpec.model_validate(draft_spec())], [], [])

    monkeypatch.setattr(agent_mod, "explore", fake_explore)
    seen = []
    with ScriptedOpenAIServer([scripted(improved_spec())]) as srv:
        envs = explore_with_agent(
            [loans_only_doc()],
            domain="test",
            model_config={"model": "scripted", "base_url": srv.base_url, "max_retries": 0},
            on_result=seen.append,
        )
        assert "post_loans_return" in user_text(srv.chat_requests[0])
    assert calls == [("test", 0)]
    assert [t.name for t in envs[0].tools][-2:] == ["return_loan", "search_loans"]
    assert seen[0].usage.calls == 1


def test_explore_with_agent_without_a_model_is_a_config_error():
    with pytest.raises(ConfigError, match="--model"):
        explore_with_agent([loans_only_doc()], domain="test", model_config=ModelConfig())


def test_verify_and_repair_rejection_is_sent_back_for_a_repair_round(monkeypatch):
    calls = []

    def fake_verify_and_repair(spec, *, out_dir=None, seed=0):  # rejects the first spec it sees
        calls.append(spec.name)
        if len(calls) == 1:
            return None, VerificationReport(
                env=spec.name, env_messages=["L2: return_loan leaves returned_at unset"]
            )
        return spec, VerificationReport(env=spec.name)

    monkeypatch.setattr(loop_mod, "verify_and_repair", fake_verify_and_repair)
    with ScriptedOpenAIServer([scripted(improved_spec())] * 2) as srv:
        res, _ = run(srv, [loans_only_doc()])
        repair = user_text(srv.chat_requests[1])
    assert "verification rejected the environment: L2: return_loan leaves returned_at unset" in repair
    assert calls == ["library", "library"] and res.outcomes[0].repair_rounds == 1 and len(res.envs) == 1


def test_importing_the_agent_does_not_import_langgraph():
    code = "import sys, envfactory.pipelines.explorer_agent; assert 'langgraph' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_draft_no_section_maps_to_still_gets_one_scripted_improvement_round():
    with ScriptedOpenAIServer([scripted(improved_spec())]) as srv:
        res, _ = run(srv, [], draft=[EnvSpec.model_validate(draft_spec())])
        (request,) = srv.chat_requests
    assert "improve the draft from its own content" in user_text(request)
    assert res.envs[0].tool("return_loan") and not res.outcomes[0].fell_back


def test_the_call_budget_bounds_the_whole_run_and_is_recorded():
    draft = EnvSpec.model_validate(draft_spec())
    with ScriptedOpenAIServer([Reply(content="not json")] * 5) as srv:
        res, _ = run(srv, [loans_only_doc()], draft=[draft], max_validation_rounds=5, max_model_calls=2)
        assert len(srv.chat_requests) == 2
    assert res.envs == [draft] and "budget of 2 model calls" in res.outcomes[0].fallback_reason
    assert "budget_exhausted" in [e.kind for e in res.transcript]


def test_real_verifiers_accept_the_scripted_improved_spec(monkeypatch):
    monkeypatch.setattr(loop_mod, "verify_and_repair", verify.verify_and_repair)
    with ScriptedOpenAIServer([scripted(improved_spec())]) as srv:
        res, _ = run(srv, [loans_only_doc()], draft=[EnvSpec.model_validate(draft_spec())])
    (outcome,) = res.outcomes
    assert not outcome.fell_back and outcome.repair_rounds == 0 and outcome.passing_tools == 5
    assert [t.name for t in res.envs[0].tools] == [
        "get_book",
        "search_books",
        "get_loan",
        "return_loan",
        "search_loans",
    ]


@pytest.mark.parametrize(
    "wrap",
    [
        lambda j: j,
        lambda j: f"```json\n{j}\n```",
        lambda j: f"Here is the spec:\n{j}\nDone.",
        lambda j: json.dumps({"spec": json.loads(j)}),
    ],
    ids=["bare", "fenced", "prose-around", "wrapped"],
)
def test_parse_reply_accepts_common_reply_shapes_and_imposes_name_and_domain(wrap):
    from envfactory.explore.agent_prompts import parse_reply

    data = improved_spec() | {"name": "renamed_by_reply", "domain": "elsewhere"}
    spec, errors = parse_reply(wrap(json.dumps(data)), name="library", domain="test", sources=["doc.yaml"])
    assert errors == [] and (spec.name, spec.domain) == ("library", "test")
    assert spec.sources == ["resources/test/library.yaml", "doc.yaml"]

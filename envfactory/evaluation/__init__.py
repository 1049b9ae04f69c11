"""BFCL-style evaluation: checkers, BFCL's file format, suites, the runner and its reports.

    build_suite(tasks, envs) -> Suite;  write_suite / load_suite     eval/suites/<domain>/
    run_eval(suite, agent, config=EvalConfig(...)) -> EvalReport     a model or a reference agent
    summarize(report) / write_report(report, out) / summary_table(summary)
    ResultsStore(path) / compare_runs(store, runs)                   eval/results/results.db (SQLModel)
    check_ast / check_multi_turn                                     BFCL's rules
    bfcl_check_ast / bfcl_check_multi_turn                           BFCL's own checker (bfcl-eval)

Names load on first use (PEP 562): ``from envfactory.evaluation import CATEGORIES`` does not
import the runner, the checkers or the environments behind them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..errors import BfclFormatError, BfclUnavailableError, SuiteError

if TYPE_CHECKING:
    from .agents import (
        Agent,
        AgentContext,
        BareAgent,
        DropOneAgent,
        ModelAgent,
        NoopAgent,
        OracleAgent,
        RandomAgent,
        expected_calls,
    )
    from .bfcl_compat import (
        BfclBackendRun,
        bfcl_available,
        bfcl_check_ast,
        bfcl_check_multi_turn,
        bfcl_data_dir,
    )
    from .bfcl_format import (
        BfclPossibleAnswer,
        BfclQuestion,
        Call,
        format_call,
        format_calls,
        ground_truth_to_calls,
        load_jsonl,
        load_possible_answers,
        load_questions,
        parse_call,
        parse_calls,
        positional_params_from_functions,
        write_jsonl,
    )
    from .categories import (
        CATEGORIES,
        SINGLE_TURN_CATEGORIES,
        canonical_category,
    )
    from .checker import (
        AST_CATEGORIES,
        CheckResult,
        ast_category_kind,
        category_of,
        check_ast,
        check_call,
        check_irrelevance,
        is_empty_output,
        standardize_string,
    )
    from .conversation import ADDITIONAL_FUNCTION_PROMPT
    from .multi_turn import (
        MultiTurnResult,
        StateDiff,
        TurnExecution,
        TurnVerdict,
        check_multi_turn,
        compare_object_states,
        compare_state_mappings,
        normalize_execution_result,
    )
    from .registry import (
        REFERENCE_AGENTS,
        build_reference_agent,
    )
    from .report import (
        summarize,
        summary_table,
        write_report,
    )
    from .runner import (
        PROMPT_SYSTEM,
        EntryResult,
        EvalConfig,
        EvalReport,
        decode_reply,
        load_suite_envs,
        openai_tools,
        run_eval,
    )
    from .stats import pass_hat_k, wilson_interval
    from .store import (
        EntryVerdict,
        EvalRun,
        ResultsStore,
        compare_runs,
    )
    from .suites import (
        Suite,
        SuiteEntry,
        bfcl_function_doc,
        build_suite,
        load_suite,
        suite_digest,
        suite_file_name,
        write_suite,
    )

_LAZY = {
    "Agent": "agents",
    "AgentContext": "agents",
    "DropOneAgent": "agents",
    "ModelAgent": "agents",
    "NoopAgent": "agents",
    "OracleAgent": "agents",
    "RandomAgent": "agents",
    "expected_calls": "agents",
    "REFERENCE_AGENTS": "registry",
    "build_reference_agent": "registry",
    "CATEGORIES": "categories",
    "SINGLE_TURN_CATEGORIES": "categories",
    "BfclBackendRun": "bfcl_compat",
    "bfcl_available": "bfcl_compat",
    "bfcl_check_ast": "bfcl_compat",
    "bfcl_check_multi_turn": "bfcl_compat",
    "bfcl_data_dir": "bfcl_compat",
    "BfclPossibleAnswer": "bfcl_format",
    "BfclQuestion": "bfcl_format",
    "Call": "bfcl_format",
    "format_call": "bfcl_format",
    "format_calls": "bfcl_format",
    "ground_truth_to_calls": "bfcl_format",
    "load_jsonl": "bfcl_format",
    "load_possible_answers": "bfcl_format",
    "load_questions": "bfcl_format",
    "parse_call": "bfcl_format",
    "parse_calls": "bfcl_format",
    "positional_params_from_functions": "bfcl_format",
    "write_jsonl": "bfcl_format",
    "AST_CATEGORIES": "checker",
    "CheckResult": "checker",
    "MultiTurnResult": "multi_turn",
    "StateDiff": "multi_turn",
    "TurnExecution": "multi_turn",
    "TurnVerdict": "multi_turn",
    "ast_category_kind": "checker",
    "category_of": "checker",
    "check_ast": "checker",
    "check_call": "checker",
    "check_irrelevance": "checker",
    "check_multi_turn": "multi_turn",
    "compare_object_states": "multi_turn",
    "compare_state_mappings": "multi_turn",
    "is_empty_output": "checker",
    "normalize_execution_result": "multi_turn",
    "standardize_string": "checker",
    "summarize": "report",
    "summary_table": "report",
    "write_report": "report",
    "PROMPT_SYSTEM": "runner",
    "ADDITIONAL_FUNCTION_PROMPT": "conversation",
    "EntryResult": "runner",
    "EvalConfig": "runner",
    "EvalReport": "runner",
    "decode_reply": "runner",
    "load_suite_envs": "runner",
    "openai_tools": "runner",
    "run_eval": "runner",
    "Suite": "suites",
    "SuiteEntry": "suites",
    "bfcl_function_doc": "suites",
    "build_suite": "suites",
    "load_suite": "suites",
    "suite_digest": "suites",
    "ResultsStore": "store",
    "EvalRun": "store",
    "EntryVerdict": "store",
    "compare_runs": "store",
    "wilson_interval": "stats",
    "pass_hat_k": "stats",
    "suite_file_name": "suites",
    "canonical_category": "categories",
    "BareAgent": "agents",
    "write_suite": "suites",
}

__all__ = [
    # checkers (single-turn, multi-turn)
    "AST_CATEGORIES",
    "CheckResult",
    "MultiTurnResult",
    "StateDiff",
    "TurnExecution",
    "TurnVerdict",
    "ast_category_kind",
    "category_of",
    "check_ast",
    "check_call",
    "check_irrelevance",
    "check_multi_turn",
    "compare_object_states",
    "compare_state_mappings",
    "is_empty_output",
    "normalize_execution_result",
    "standardize_string",
    # BFCL file format
    "BfclFormatError",
    "BfclPossibleAnswer",
    "BfclQuestion",
    "Call",
    "format_call",
    "format_calls",
    "ground_truth_to_calls",
    "load_jsonl",
    "load_possible_answers",
    "load_questions",
    "parse_call",
    "parse_calls",
    "positional_params_from_functions",
    "write_jsonl",
    # BFCL's own checker
    "BfclBackendRun",
    "BfclUnavailableError",
    "bfcl_available",
    "bfcl_check_ast",
    "bfcl_check_multi_turn",
    "bfcl_data_dir",
    # suites
    "CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "Suite",
    "SuiteEntry",
    "SuiteError",
    "bfcl_function_doc",
    "build_suite",
    "load_suite",
    "canonical_category",
    "suite_digest",
    "suite_file_name",
    "write_suite",
    # agents
    "REFERENCE_AGENTS",
    "Agent",
    "AgentContext",
    "BareAgent",
    "DropOneAgent",
    "ModelAgent",
    "NoopAgent",
    "OracleAgent",
    "RandomAgent",
    "build_reference_agent",
    "expected_calls",
    # runner and reports
    "PROMPT_SYSTEM",
    "ADDITIONAL_FUNCTION_PROMPT",
    "EntryResult",
    "EvalConfig",
    "EvalReport",
    "decode_reply",
    "load_suite_envs",
    "openai_tools",
    "run_eval",
    "summarize",
    "summary_table",
    "write_report",
    # results store
    "EntryVerdict",
    "EvalRun",
    "ResultsStore",
    "compare_runs",
    "pass_hat_k",
    "wilson_interval",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""BFCL's own checkers (the ``bfcl-eval`` package) behind the interface of
:mod:`envfactory.evaluation.checker`, for agreement tests and for anyone who wants the official
verdicts. ``bfcl_eval`` is imported lazily; install it with ``scripts/install_bfcl.sh``
(``pip install --no-deps bfcl-eval mpmath filelock``).

Also here: :class:`BfclBackendRun`, which runs call strings against BFCL's multi-turn backend
classes (GorillaFileSystem, TradingBot, ...) by dispatching parsed calls to their methods --
no ``eval`` -- so our checker can be fed the same executions BFCL's checker sees.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import sys
import types
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envfactory.bfcl_data import find_bfcl_data_dir
from envfactory.errors import BfclFormatError, BfclUnavailableError
from envfactory.evaluation.bfcl_format import parse_call
from envfactory.evaluation.checker import CheckResult
from envfactory.evaluation.multi_turn import MultiTurnResult, TurnExecution, normalize_execution_result

__all__ = [
    "BfclUnavailableError",
    "BfclBackendRun",
    "bfcl_available",
    "bfcl_data_dir",
    "bfcl_check_ast",
    "bfcl_check_multi_turn",
    "bfcl_eval_runner",
    "bfcl_handler",
]

# BFCL's executor refuses these method names before eval'ing a call; so do we.
_BLOCKED_METHODS = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
_MODEL_CONFIG = "bfcl_eval.constants.model_config"


@dataclass(frozen=True)
class _StubModelConfig:
    underscore_to_dot: bool = False


class _StubModelConfigMapping(dict):
    # Any model name maps to a config that keeps dotted function names as they are, which is
    # what our checker does (it compares names exactly).
    def __missing__(self, key: str) -> _StubModelConfig:
        return _StubModelConfig()


def _stub_model_config() -> None:
    # ast_checker.py imports MODEL_CONFIG_MAPPING from bfcl_eval.constants.model_config, which
    # imports every model handler at module level (openai, anthropic, cohere, mistralai,
    # google-genai, qwen-agent, boto3, ... and torch through sentence-transformers). The checker
    # only reads `.underscore_to_dot` from it (for names with a "."), so a stub keeps the import
    # light. A real module already imported is left alone.
    if _MODEL_CONFIG in sys.modules:
        return
    stub = types.ModuleType(_MODEL_CONFIG)
    stub.__doc__ = "Stub installed by envfactory.evaluation.bfcl_compat (see there)."
    stub.MODEL_CONFIG_MAPPING = _StubModelConfigMapping()  # type: ignore[attr-defined]
    sys.modules[_MODEL_CONFIG] = stub


def _import(module: str) -> Any:
    _stub_model_config()
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BfclUnavailableError(
            f"{module}: {e} (run scripts/install_bfcl.sh to install bfcl-eval for this interpreter)"
        ) from e


def _identity(f: Any = None, *args: Any, **kwargs: Any) -> Any:
    return f


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise BfclUnavailableError(
        "stubbed by envfactory.evaluation.bfcl_compat (Java/JavaScript parsing not installed)"
    )


class _StubError(Exception):
    pass


# What bfcl_eval's eval runner and model handlers import at module level but whose work the
# Python checkers and decoders never reach: the model vendors' SDKs, .env loading, tree-sitter
# (Java/JS parsing). A stub goes in only where the real module is not installed.
_RUNNER_STUBS: dict[str, dict[str, Any]] = {
    "dotenv": {"load_dotenv": _identity},
    "overrides": {"final": _identity, "override": _identity},
    "openai": {"OpenAI": object, "RateLimitError": _StubError},
    "bfcl_eval.model_handler.parser.java_parser": {"parse_java_function_call": _refuse},
    "bfcl_eval.model_handler.parser.js_parser": {"parse_javascript_function_call": _refuse},
}


def _stub_runner_imports() -> None:
    for name, attrs in _RUNNER_STUBS.items():
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if found and not name.startswith("bfcl_eval.model_handler.parser"):
            continue
        if found:  # the parsers exist in the wheel; they fail only on tree_sitter
            try:
                importlib.import_module(name)
                continue
            except ImportError:
                pass
        stub = types.ModuleType(name)
        stub.__doc__ = "Stub installed by envfactory.evaluation.bfcl_compat (see _RUNNER_STUBS)."
        for attr, value in attrs.items():
            setattr(stub, attr, value)
        sys.modules[name] = stub


def bfcl_eval_runner() -> Any:
    """BFCL's eval runner module (``ast_file_runner``, ``relevance_file_runner``, ...), importable
    without the vendor SDKs it imports at module level (see ``_RUNNER_STUBS``)."""
    _stub_model_config()
    _stub_runner_imports()
    return _import("bfcl_eval.eval_checker.eval_runner")


def bfcl_handler(mode: str) -> Any:
    """BFCL's OpenAI chat-completions handler for ``mode`` ``fc`` or ``prompt``, with no client:
    its ``decode_ast`` / ``decode_execute`` are BFCL's decoders for raw model output (fc: a list
    of ``{name: arguments_json}``; prompt: the reply text)."""
    _stub_model_config()
    _stub_runner_imports()
    module = _import("bfcl_eval.model_handler.api_inference.openai_completion")
    handler = module.OpenAICompletionsHandler.__new__(module.OpenAICompletionsHandler)
    handler.is_fc_model = mode == "fc"
    return handler


def bfcl_available() -> bool:
    """True when BFCL's AST and multi-turn checkers import."""
    try:
        _import("bfcl_eval.eval_checker.ast_eval.ast_checker")
        _import("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
        _import("bfcl_eval.utils")
    except BfclUnavailableError:
        return False
    return True


def bfcl_data_dir() -> Path:
    """The data folder shipped inside the bfcl-eval wheel (``BFCL_v4_*.json``,
    ``possible_answer/``, ``multi_turn_func_doc/``); BfclUnavailableError when not installed."""
    data = find_bfcl_data_dir()
    if data is None:
        raise BfclUnavailableError(
            "bfcl_eval: not installed, or it has no data folder "
            "(run scripts/install_bfcl.sh to install bfcl-eval for this interpreter)"
        )
    return data


def _bfcl_result(raw: Mapping[str, Any]) -> CheckResult:
    if raw.get("valid"):
        return CheckResult.ok()
    errors = raw.get("error", raw.get("error_message", ()))
    if isinstance(errors, (str, dict)):
        errors = [errors]
    return CheckResult(False, raw.get("error_type"), tuple(errors))


def bfcl_check_ast(
    functions: Sequence[Mapping[str, Any]],
    model_calls: Sequence[Mapping[str, Mapping[str, Any]]] | None,
    possible_answer: Sequence[Mapping[str, Any]] | None,
    category: str,
) -> CheckResult:
    """BFCL's verdict on one single-turn Python entry; same arguments as ``checker.check_ast``.

    Mirrors BFCL's eval runner around ``ast_checker``: (ir)relevance via ``is_empty_output``,
    the call-format check, then ``ast_checker``. A crash inside BFCL's checker is reported as
    ``bfcl_checker:crash`` rather than raised, so one odd entry does not stop a comparison.
    """
    ast_checker = _import("bfcl_eval.eval_checker.ast_eval.ast_checker")
    utils = _import("bfcl_eval.utils")
    enums = _import("bfcl_eval.constants.enums")

    model_calls = None if model_calls is None else copy.deepcopy(list(model_calls))
    if "relevance" in category:  # irrelevance and live_relevance
        has_call = model_calls is not None and not utils.is_empty_output(model_calls)
        if "irrelevance" in category:
            if has_call:
                return CheckResult.fail(
                    "irrelevance_error:decoder_success",
                    "Valid syntax. Successfully decode AST when it should not.",
                )
            return CheckResult.ok()
        if not has_call:
            return CheckResult.fail(
                "relevance_error:decoder_failed", "Invalid syntax. Failed to decode AST when it should have."
            )
        return CheckResult.ok()

    if model_calls is None:
        return CheckResult.fail("ast_decoder:decoder_failed", "Invalid syntax. Failed to decode AST.")
    if not utils.is_function_calling_format_output(model_calls):
        return CheckResult.fail(
            "ast_decoder:decoder_wrong_output_format", "Did not output in the specified format."
        )
    try:
        raw = ast_checker.ast_checker(
            copy.deepcopy(list(functions)),
            model_calls,
            copy.deepcopy(list(possible_answer or [])),
            enums.Language.PYTHON,
            category,
            "envfactory-compat",
        )
    except Exception as e:  # noqa: BLE001 - BFCL's checker can crash on odd input; that is a verdict here
        return CheckResult.fail("bfcl_checker:crash", f"{type(e).__name__}: {e}")
    return _bfcl_result(raw)


def bfcl_check_multi_turn(
    entry: Mapping[str, Any],
    model_turns: Sequence[Sequence[Sequence[str]]],
    ground_truth: Sequence[Sequence[str]],
) -> MultiTurnResult:
    """BFCL's verdict on one multi-turn entry.

    entry: the question entry (``id``, ``initial_config``, ``involved_classes``).
    model_turns: per turn, per step, the decoded call strings (keyword arguments), as BFCL's
        runner passes them (steps that decoded to nothing already left out).
    ground_truth: per turn, the gold call strings.

    BFCL caches its backend instances in a module's globals, keyed by model name and entry id;
    each call here uses a fresh model name and removes its instances afterwards. BFCL reports
    only the first failure, so ``turns`` is empty.
    """
    checker = _import("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    utils = _import("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")

    if len(model_turns) != len(ground_truth):
        return MultiTurnResult(False, "multi_turn:force_terminated", ("turn count differs",), ())
    model_name = f"envfactory_compat_{uuid.uuid4().hex}"
    try:
        raw = checker.multi_turn_checker(
            [[list(step) for step in turn] for turn in model_turns],
            [list(turn) for turn in ground_truth],
            copy.deepcopy(dict(entry)),
            entry["id"].rsplit("_", 1)[0],
            model_name,
        )
    except Exception as e:  # noqa: BLE001
        return MultiTurnResult(False, "bfcl_checker:crash", (f"{type(e).__name__}: {e}",), ())
    finally:
        for key in [k for k in vars(utils) if k.startswith(model_name)]:
            del vars(utils)[key]
    if raw.get("valid"):
        return MultiTurnResult(True, None, (), ())
    return MultiTurnResult(False, raw.get("error_type"), (str(raw.get("error_message", "")),), ())


class BfclBackendRun:
    """One run (model or gold) of a multi-turn entry on fresh BFCL backend instances.

    ``execute(calls)`` runs call strings in order and returns BFCL-normalized results; an error
    becomes ``"Error during execution: ..."`` as in BFCL. Calls are parsed with
    :func:`~envfactory.evaluation.bfcl_format.parse_call` (positional arguments bound by the
    method's signature) and dispatched to the backend method of that name -- the last involved
    class that defines it wins, as in BFCL.
    """

    def __init__(self, entry: Mapping[str, Any], *, long_context: bool | None = None):
        config = _import("bfcl_eval.constants.executable_backend_config")
        if long_context is None:
            category = entry["id"].rsplit("_", 1)[0]
            long_context = "long_context" in category or "composite" in category
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Any] = {}
        for class_name in entry["involved_classes"]:
            module = _import(config.CLASS_FILE_PATH_MAPPING[class_name])
            instance = getattr(module, class_name)()
            if class_name not in config.STATELESS_CLASSES:
                scenario = copy.deepcopy((entry.get("initial_config") or {}).get(class_name, {}))
                instance._load_scenario(scenario, long_context=long_context)
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self._methods[name] = method
        self._positional = {}
        for name, method in self._methods.items():
            try:
                self._positional[name] = list(inspect.signature(method).parameters)
            except (TypeError, ValueError):
                self._positional[name] = []

    def execute(self, calls: Sequence[str]) -> list[str]:
        return [self._execute_one(call) for call in calls]

    def _execute_one(self, text: str) -> str:
        try:
            call = parse_call(text, positional_params=self._positional)
        except BfclFormatError as e:
            return f"Error during execution: {e}"
        ((name, arguments),) = call.items()
        short = name.split(".")[-1]
        if short in _BLOCKED_METHODS:
            return f"Error during execution: Function call {short} is not allowed."
        method = self._methods.get(name)
        if method is None:
            return f"Error during execution: name '{name}' is not defined"
        try:
            return normalize_execution_result(method(**arguments))
        except Exception as e:  # noqa: BLE001 - a failing tool call is a result the model sees
            return f"Error during execution: {e}"

    def turn(self, calls: Sequence[str]) -> TurnExecution:
        """Run one turn's calls and return what the checker needs."""
        return TurnExecution(calls=tuple(calls), results=tuple(self.execute(calls)))

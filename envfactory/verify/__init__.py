"""Verification of environments: smoke check, L1 properties, L2 interactions, L3 replayed
rollouts (cassettes), mutation score and rule-based repair.

Every check compares the environment under test with an *expected* spec (by default its own;
for a mutant, the original), through oracles written from the spec, not the runtime's SQL.
"""

from .args import valid_args
from .cassette import (
    Cassette,
    check_doc_examples,
    load_cassette,
    record_cassette,
    replay_cassette,
    replay_cassettes,
    save_cassette,
)
from .levels import check_l1, check_l2, fk_violations
from .mutants import Mutant, MutationReport, build_mutants, run_mutants
from .repair import repair_spec, verify_and_repair
from .report import ToolReport, VerificationReport, verify_environment
from .smoke import ToolCheck, smoke_check

__all__ = [
    "Cassette",
    "Mutant",
    "MutationReport",
    "ToolCheck",
    "ToolReport",
    "VerificationReport",
    "build_mutants",
    "check_doc_examples",
    "check_l1",
    "check_l2",
    "fk_violations",
    "load_cassette",
    "record_cassette",
    "repair_spec",
    "replay_cassette",
    "replay_cassettes",
    "run_mutants",
    "save_cassette",
    "smoke_check",
    "valid_args",
    "verify_and_repair",
    "verify_environment",
]

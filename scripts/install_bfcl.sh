#!/usr/bin/env bash
# Install BFCL's own checker (the `bfcl-eval` wheel from PyPI) into the current interpreter,
# for tests/evaluation/test_bfcl_agreement.py. Idempotent: a second run only checks the import.
#
#   scripts/install_bfcl.sh                 # uses $PYTHON, else .venv/bin/python, else python3
#
# bfcl-eval declares ~35 dependencies (torch via sentence-transformers, vllm extras, every model
# vendor's SDK, pinned numpy). Its checkers need none of them, so the wheel goes in with
# --no-deps plus only what the checker modules import at module level:
#   mpmath    bfcl_eval/eval_checker/multi_turn_eval/func_source_code/math_api.py (MathAPI backend)
#   filelock  bfcl_eval/utils.py (is_empty_output, used for irrelevance verdicts)
# The one heavy module-level import (bfcl_eval.constants.model_config, which imports every
# model handler) is stubbed in envfactory/evaluation/bfcl_compat.py instead of installed.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
BFCL_SPEC="${ENVFACTORY_BFCL_VERSION:-bfcl-eval==2026.3.23}"

probe() {
  "$PY" - <<'PY'
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in ("bfcl_eval", "mpmath", "filelock")) else 1)
PY
}

if ! probe; then
  echo "install_bfcl: installing $BFCL_SPEC (--no-deps) and its checker's imports into $PY" >&2
  # One --no-deps install: mpmath and filelock have no dependencies of their own. pip still
  # prints bfcl-eval's unmet (deliberately skipped) requirements; that is expected.
  "$PY" -m pip install -q --disable-pip-version-check --no-deps \
    "$BFCL_SPEC" "mpmath>=1.3,<2" "filelock>=3.12,<4"
fi
probe || { echo "install_bfcl: bfcl_eval is still not importable by $PY" >&2; exit 1; }
"$PY" -c 'import bfcl_eval, os; print(os.path.dirname(bfcl_eval.__file__))'

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


@pytest.fixture(scope="session")
def trip_desk_env():
    from envfactory.runtime import load_environment

    return load_environment(TRIP_DESK)

from __future__ import annotations

import pytest

from ._shop import shop_spec


@pytest.fixture(scope="session")
def shop_env():
    from envfactory.runtime import Environment

    return Environment.from_spec(shop_spec())

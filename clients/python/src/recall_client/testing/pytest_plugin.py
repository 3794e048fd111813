"""pytest fixtures for a real local sidecar (registered when recall-client is installed).

    # conftest.py
    import pytest
    from recall_client.testing import Fixture

    @pytest.fixture(scope="session")
    def recall_sidecar_options():
        return {"fixtures": [Fixture("acme", "andy", file="tests/andy.jsonl")]}

    # test_agent.py
    def test_remembers_the_editor(recall_sidecar):
        with recall_sidecar.client() as recall:
            ...

One sidecar serves the whole test session; each test that asks for ``recall_sidecar`` gets it
reset afterwards (every principal's writes gone, the fixtures back).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from recall_client.testing import LocalSidecar, start_local_sidecar


@pytest.fixture(scope="session")
def recall_sidecar_options() -> dict[str, Any]:
    """Keyword arguments of ``start_local_sidecar`` (fixtures, env, ...): override it in a conftest.py."""
    return {}


@pytest.fixture(scope="session")
def recall_sidecar_session(recall_sidecar_options: dict[str, Any]) -> Iterator[LocalSidecar]:
    """The session's sidecar, started once and stopped at the end."""
    sidecar = start_local_sidecar(**recall_sidecar_options)
    try:
        yield sidecar
    finally:
        sidecar.stop()


@pytest.fixture
def recall_sidecar(recall_sidecar_session: LocalSidecar) -> Iterator[LocalSidecar]:
    """The session's sidecar for one test, reset when the test ends."""
    yield recall_sidecar_session
    recall_sidecar_session.reset()

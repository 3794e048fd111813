"""One sidecar for the suite (two principals of tenant acme, and a Unix socket beside its TCP port).

The suite starts its sidecars with recall_client.testing directly; the pytest plugin's fixtures are
left to examples/python, whose conftest.py configures them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memories import ANDY, BEA
from recall_client import RecallClient
from recall_client.testing import Fixture, LocalSidecar, start_local_sidecar

REPO = Path(__file__).resolve().parents[3]
# In this repository the sidecar is the checkout's build (`npm run build`), unless RECALL_BIN says otherwise.
os.environ.setdefault("RECALL_BIN", str(REPO / "dist" / "cli" / "main.js"))

FIXTURES = [Fixture("acme", "andy", records=ANDY), Fixture("acme", "bea", records=BEA)]


@pytest.fixture(scope="session")
def sidecar() -> Iterator[LocalSidecar]:
    with tempfile.TemporaryDirectory(prefix="recall-py-") as folder:
        started = start_local_sidecar(FIXTURES, env={"RECALL_SOCKET_PATH": f"{folder}/recall.sock"})
        try:
            yield started
        finally:
            assert started.stop() == 0


@pytest.fixture
def andy(sidecar: LocalSidecar) -> Iterator[RecallClient]:
    """Andy's client; the sidecar is reset after the test."""
    yield sidecar.client()
    sidecar.reset()


@pytest.fixture
def bea(sidecar: LocalSidecar) -> RecallClient:
    return sidecar.client("acme", "bea")

"""The recall sidecar for this folder's tests: copy this file and test_agent_runtime.py to start.

recall-client's pytest plugin gives every test that asks for `recall_sidecar` a real local
sidecar (one per test session, reset after each test); this fixture says what it starts with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from recall_client.testing import Fixture

HERE = Path(__file__).resolve().parent
# In this repository: the checkout's build. In your project, `recall` on PATH or in node_modules is found by itself.
os.environ.setdefault("RECALL_BIN", str(HERE.parents[1] / "dist" / "cli" / "main.js"))


@pytest.fixture(scope="session")
def recall_sidecar_options() -> dict[str, Any]:
    # Andy's memory, one `recall import` record per line.
    return {"fixtures": [Fixture("acme", "andy", file=HERE / "andy.jsonl")]}

"""Integer arguments out of their protobuf field's range, or not integers: RecallError naming the field.

protobuf itself raises a bare ValueError ("Value out of range") or TypeError; the README promises
one exception type, so the client checks each integer field before it builds a request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from recall_client import AsyncRecallClient, RecallClient, RecallError, SessionRef
from recall_client.testing import LocalSidecar

INT32_MAX = 2**31 - 1

# (the call, the field it names, the RPC): every integer field the client sets.
SYNC_CASES: list[tuple[Callable[[RecallClient], object], str, str]] = [
    (lambda c: c.search("editor", budget_tokens=2**40), "budget_tokens", "MemoryService.Search"),
    (lambda c: c.search("editor", max_items=-(2**31) - 1), "max_items", "MemoryService.Search"),
    (lambda c: c.recall_episodes("s-1", page_size=2**31), "page_size", "MemoryService.RecallEpisodes"),
    (lambda c: c.recall_episodes("s-1", budget_tokens=2**40), "budget_tokens", "MemoryService.RecallEpisodes"),
    (lambda c: c.open_session("s-1", context_window_tokens=2**40), "context_window_tokens", "MemoryService.Recall"),
    (lambda c: c.recall_for_turn(SessionRef("s-1", "", 2**63), "t-1", "editor"), "snapshot_watermark", "MemoryService.Recall"),
]


@pytest.mark.parametrize(("call", "field", "method"), SYNC_CASES, ids=[f"{m}.{f}" for _, f, m in SYNC_CASES])
def test_an_out_of_range_integer_is_a_recall_error_naming_the_field(
    andy: RecallClient, call: Callable[[RecallClient], object], field: str, method: str
) -> None:
    with pytest.raises(RecallError) as raised:
        call(andy)
    error = raised.value
    assert (error.status, error.method, error.attempts) == ("INVALID_ARGUMENT", method, 0)
    assert error.message.startswith(f"{field}: must be between ")


def test_a_non_integer_is_a_recall_error_naming_the_field(andy: RecallClient) -> None:
    bad: Any = 2.5
    with pytest.raises(RecallError) as raised:
        andy.search("editor", budget_tokens=bad)
    assert raised.value.status == "INVALID_ARGUMENT"
    assert raised.value.message == "budget_tokens: must be an integer, not float"


def test_the_edges_of_the_range_are_sent(andy: RecallClient) -> None:
    # In range for protobuf: the request goes out (one attempt), and the sidecar's own limit answers.
    with pytest.raises(RecallError) as raised:
        andy.search("editor", budget_tokens=INT32_MAX)
    assert (raised.value.status, raised.value.attempts) == ("INVALID_ARGUMENT", 1)
    assert raised.value.message.startswith("budget_tokens: must be at most ")
    session = andy.open_session("s-edges", context_window_tokens=INT32_MAX)
    turn = andy.recall_for_turn(SessionRef(session.session_id, "", session.watermark), "t-edges", "editor")
    assert turn.result is not None


ASYNC_CASES: list[tuple[Callable[[AsyncRecallClient], Awaitable[object]], str, str]] = [
    (lambda c: c.search("editor", budget_tokens=2**40), "budget_tokens", "MemoryService.Search"),
    (lambda c: c.recall_episodes("s-1", page_size=-(2**31) - 1), "page_size", "MemoryService.RecallEpisodes"),
    (lambda c: c.open_session("s-1", context_window_tokens=2**31), "context_window_tokens", "MemoryService.Recall"),
    (lambda c: c.recall_for_turn(SessionRef("s-1", "", -(2**63) - 1), "t-1", "editor"), "snapshot_watermark", "MemoryService.Recall"),
]


@pytest.mark.parametrize(("call", "field", "method"), ASYNC_CASES, ids=[f"{m}.{f}" for _, f, m in ASYNC_CASES])
def test_the_async_client_names_the_field_too(
    sidecar: LocalSidecar, call: Callable[[AsyncRecallClient], Awaitable[object]], field: str, method: str
) -> None:
    async def run() -> RecallError:
        async with sidecar.async_client() as andy:
            with pytest.raises(RecallError) as raised:
                await call(andy)
            return raised.value

    error = asyncio.run(run())
    assert (error.status, error.method, error.attempts) == ("INVALID_ARGUMENT", method, 0)
    assert error.message.startswith(f"{field}: must be between ")

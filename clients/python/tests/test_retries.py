"""Deadlines and retries: UNAVAILABLE only, within the deadline, a rejection id kept across attempts."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import grpc
import pytest

from memories import CONCISE
from recall_client import AsyncRecallClient, RecallClient, RecallError, RetryPolicy
from recall_client.testing import LocalSidecar


def nowhere() -> str:
    """A loopback port where nothing listens: every attempt is UNAVAILABLE."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_unavailable_is_retried_within_the_deadline_and_the_error_says_how_often() -> None:
    with RecallClient(nowhere(), tenant_id="t", principal_id="p", retry=RetryPolicy(initial_backoff=0.01)) as client:
        with pytest.raises(RecallError) as unary:
            client.search("anything", timeout=2)
        assert (unary.value.status, unary.value.attempts, unary.value.method) == ("UNAVAILABLE", 3, "MemoryService.Search")
        with pytest.raises(RecallError) as stream:
            client.open_session(timeout=2)
        assert (stream.value.status, stream.value.attempts, stream.value.method) == ("UNAVAILABLE", 3, "MemoryService.Recall")
    with RecallClient(nowhere(), tenant_id="t", principal_id="p", retry=RetryPolicy(max_attempts=1)) as once:
        with pytest.raises(RecallError) as single:
            once.search("anything")
        assert single.value.attempts == 1


def test_no_retry_starts_without_time_for_it() -> None:
    # A backoff longer than the deadline: the first failure is final.
    with RecallClient(nowhere(), tenant_id="t", principal_id="p", retry=RetryPolicy(initial_backoff=5)) as client:
        started = time.monotonic()
        with pytest.raises(RecallError) as error:
            client.search("anything", timeout=1)
        assert error.value.attempts == 1 and time.monotonic() - started < 1


def test_the_async_client_retries_alike() -> None:
    async def run() -> RecallError:
        async with AsyncRecallClient(nowhere(), tenant_id="t", principal_id="p", retry=RetryPolicy(initial_backoff=0.01)) as client:
            try:
                await client.search("anything", timeout=2)
            except RecallError as error:
                return error
        raise AssertionError("no error")

    error = asyncio.run(run())
    assert (error.status, error.attempts) == ("UNAVAILABLE", 3)


class _Unavailable(grpc.RpcError):
    """What a call that never reached the sidecar returns: an error that is also its own outcome."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "injected"

    def result(self, timeout: float | None = None) -> Any:
        raise self


class FailFirst(grpc.UnaryUnaryClientInterceptor):
    """Fails the first call with UNAVAILABLE before it is sent; records every request."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        self.requests.append(request)
        if len(self.requests) == 1:
            return _Unavailable()
        return continuation(client_call_details, request)


def test_a_retried_rejection_sends_the_same_rejection_id(sidecar: LocalSidecar) -> None:
    flaky = FailFirst()
    with RecallClient(sidecar.address, tenant_id="acme", principal_id="andy", interceptors=[flaky]) as client:
        try:
            rejection = client.reject(CONCISE, "unspecified")
        finally:
            sidecar.reset()
    ids = [r.rejection_id for r in flaky.requests]
    assert len(ids) == 2 and ids[0] == ids[1] == rejection.rejection_id


def test_a_deadline_is_final(sidecar: LocalSidecar) -> None:
    with RecallClient(sidecar.address, tenant_id="acme", principal_id="andy") as client:
        # Connected first: on a new channel a 1 ms call can end as UNAVAILABLE (no connection yet).
        grpc.channel_ready_future(client.channel).result(timeout=10)
        with pytest.raises(RecallError) as error:
            client.search("concise writing", timeout=0.001)
    # Which status wins is a race: the client's DEADLINE_EXCEEDED, or the sidecar's UNAVAILABLE for a
    # store that cannot answer before the deadline (CI saw both). Either way no retry follows: the
    # deadline covers the retries too.
    assert error.value.status in ("DEADLINE_EXCEEDED", "UNAVAILABLE")
    assert error.value.attempts == 1

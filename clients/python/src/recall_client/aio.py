"""The asyncio client (grpc.aio): the same flow, names and rules as the blocking client.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import grpc
import grpc.aio

from recall_client import requests as rq
from recall_client._gen.memory.v1 import inspect_service_pb2_grpc as inspect_grpc
from recall_client._gen.memory.v1 import memory_service_pb2 as m
from recall_client._gen.memory.v1 import memory_service_pb2_grpc as memory_grpc
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w
from recall_client._gen.memory.v1 import write_service_pb2_grpc as write_grpc
from recall_client.client import DEFAULT_TIMEOUT, RECALL
from recall_client.errors import RecallError, from_rpc_error
from recall_client.identity import Identity, Tls, TokenSource, aio_channel
from recall_client.requests import RejectionKind, SessionRef, SessionType, Surface, WorkingState
from recall_client.results import ArmEvent, EpisodesPage, Erasure, RecallResult, Rejection, SearchResult, Trace, TurnRecall
from recall_client.retry import DEFAULT_RETRY, RetryPolicy, backoff_before_retry
from recall_client.write_methods import AsyncWriteMethods

T = TypeVar("T")


@dataclass(frozen=True)
class AsyncSession(SessionRef):
    """An open session of an ``AsyncRecallClient``."""

    #: The session-open snapshot: put ``snapshot.rendered`` in the cached system prefix, once.
    snapshot: RecallResult = field(repr=False)
    client: AsyncRecallClient = field(repr=False, compare=False)

    async def recall_for_turn(
        self,
        turn_id: str,
        text: str | None = None,
        *,
        subjects: Sequence[str] = (),
        working_state: WorkingState | None = None,
        surface: Surface | None = None,
        on_arm: Callable[[ArmEvent], None] | None = None,
        timeout: float | None = None,
    ) -> TurnRecall:
        """An in-turn recall with this session's watermark (see ``AsyncRecallClient.recall_for_turn``)."""
        return await self.client.recall_for_turn(
            self, turn_id, text, subjects=subjects, working_state=working_state, surface=surface, on_arm=on_arm, timeout=timeout
        )


class AsyncRecallClient(AsyncWriteMethods):
    """An asyncio client for one principal of one sidecar; the arguments are ``RecallClient``'s.

    Create it inside the event loop it is used on; use ``async with`` or ``await close()``.
    """

    def __init__(
        self,
        address: str,
        *,
        tenant_id: str | None = None,
        principal_id: str | None = None,
        token: TokenSource | None = None,
        tls: Tls | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy = DEFAULT_RETRY,
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
        scope: str = "",
    ) -> None:
        self.identity = Identity(tenant_id, principal_id, token, tls)
        #: The project this client's application works in: what it remembers is learned there
        #: (origin_scope) and its episodes belong to it, unless a call says otherwise.
        self.scope = scope
        self.address = address
        self.timeout = timeout
        self.retry = retry
        self.channel = aio_channel(address, self.identity, options, interceptors)
        #: The generated stubs on this client's channel (identity included), for every other RPC.
        self.memory = memory_grpc.MemoryServiceStub(self.channel)
        self.write = write_grpc.MemoryWriteServiceStub(self.channel)
        self.inspect = inspect_grpc.InspectServiceStub(self.channel)

    async def __aenter__(self) -> AsyncRecallClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the channel."""
        await self.channel.close()

    async def open_session(
        self,
        session_id: str | None = None,
        *,
        scope: str = "",
        goal: str | None = None,
        session_type: SessionType = "interactive",
        context_window_tokens: int = 0,
        surface: Surface | None = None,
        timeout: float | None = None,
    ) -> AsyncSession:
        """Opens a session: one snapshot recall, returned with the session that carries its watermark."""
        sid = session_id or rq.new_id()
        snapshot = await self._recall(rq.snapshot_request(sid, scope, session_type, context_window_tokens, goal, surface), None, timeout)
        return AsyncSession(sid, scope, snapshot.snapshot_watermark, snapshot, self)

    async def recall_for_turn(
        self,
        session: SessionRef,
        turn_id: str,
        text: str | None = None,
        *,
        subjects: Sequence[str] = (),
        working_state: WorkingState | None = None,
        surface: Surface | None = None,
        on_arm: Callable[[ArmEvent], None] | None = None,
        timeout: float | None = None,
    ) -> TurnRecall:
        """An in-turn recall: the stream is consumed, each arm's event goes to ``on_arm``."""
        request = rq.turn_request(session, turn_id, text, subjects, working_state, surface)
        return TurnRecall.of(await self._recall(request, on_arm, timeout))

    async def search(
        self,
        text: str,
        *,
        subjects: Sequence[str] = (),
        type_hints: Sequence[str] = (),
        scope: str = "",
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        budget_tokens: int = 0,
        max_items: int = 0,
        session_id: str = "",
        turn_id: str = "",
        surface: Surface | None = None,
        timeout: float | None = None,
    ) -> SearchResult:
        """The agent's memory.search tool."""
        request = rq.search_request(text, subjects, type_hints, scope, as_of, known_at, budget_tokens, max_items, session_id, turn_id, surface)
        return SearchResult.from_pb(await self._unary("MemoryService.Search", timeout, lambda s: self.memory.Search(request, timeout=s)))

    async def recall_episodes(
        self,
        session_id: str = "",
        *,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        include_archival: bool = False,
        page_size: int = 0,
        page_token: str = "",
        budget_tokens: int = 0,
        turn_id: str = "",
        surface: Surface | None = None,
        timeout: float | None = None,
    ) -> EpisodesPage:
        """The agent's memory.recall_episodes tool."""
        request = rq.episodes_request(session_id, start_time, end_time, include_archival, page_size, page_token, budget_tokens, turn_id, surface)
        response = await self._unary("MemoryService.RecallEpisodes", timeout, lambda s: self.memory.RecallEpisodes(request, timeout=s))
        return EpisodesPage.from_pb(response)

    async def get_trace(self, trace_id: str = "", *, turn_id: str = "", viewing_surface: Surface | None = None, timeout: float | None = None) -> Trace:
        """A persisted trace: by ``trace_id`` (operator form) or by ``turn_id`` (user form)."""
        request = m.GetTraceRequest(trace_id=trace_id, turn_id=turn_id)
        if viewing_surface is not None:
            request.viewing_surface.CopyFrom(viewing_surface.to_pb())
        return Trace.from_pb(await self._unary("MemoryService.GetTrace", timeout, lambda s: self.memory.GetTrace(request, timeout=s)))

    async def cite(self, trace_id: str, belief_ids: Sequence[str], *, turn_id: str = "", timeout: float | None = None) -> int:
        """Records the beliefs the model cited; returns the citations newly recorded."""
        request = w.RecordCitationsRequest(trace_id=trace_id, belief_ids=list(belief_ids), turn_id=turn_id)
        response = await self._unary("MemoryWriteService.RecordCitations", timeout, lambda s: self.write.RecordCitations(request, timeout=s))
        return response.recorded

    async def reject(
        self,
        belief_id: str,
        kind: RejectionKind,
        *,
        correction: t.Belief | Mapping[str, Any] | None = None,
        scope: str = "",
        reason: str = "",
        rejection_id: str | None = None,
        timeout: float | None = None,
    ) -> Rejection:
        """The user says a belief is wrong (see ``RecallClient.reject``); the id survives retries."""
        rid = rejection_id or rq.new_id()
        request = rq.reject_request(rid, belief_id, kind, correction, scope, reason)
        response = await self._unary("MemoryWriteService.RejectBelief", timeout, lambda s: self.write.RejectBelief(request, timeout=s))
        return Rejection(rid, response.store_position)

    async def erase_principal(self, *, tenant_id: str | None = None, principal_id: str | None = None, timeout: float | None = None) -> Erasure:
        """Erases everything stored for this client's principal (ErasePrincipal)."""
        tenant = tenant_id or self.identity.tenant_id
        principal = principal_id or self.identity.principal_id
        if not tenant or not principal:
            raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, "MemoryWriteService.ErasePrincipal", "tenant_id, principal_id: required to confirm the erase", 0)
        request = w.ErasePrincipalRequest(tenant_id=tenant, principal_id=principal)
        response = await self._unary("MemoryWriteService.ErasePrincipal", timeout, lambda s: self.write.ErasePrincipal(request, timeout=s))
        return Erasure.from_pb(response)

    async def _unary(self, method: str, timeout: float | None, send: Callable[[float], Awaitable[T]], can_retry: Callable[[], bool] = lambda: True) -> T:
        """One call under one deadline (retries included), retried when safe (retry.py)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        attempt = 0
        while True:
            attempt += 1
            try:
                return await send(max(0.001, deadline - time.monotonic()))
            except grpc.RpcError as error:
                failed = from_rpc_error(error, method, attempt)
            except RecallError as error:
                failed = RecallError(error.code, error.method, error.message, attempt)
            wait = backoff_before_retry(failed.code, attempt, self.retry, deadline - time.monotonic(), can_retry())
            if wait is None:
                raise failed
            await asyncio.sleep(wait)

    async def _recall(self, request: m.RecallRequest, on_arm: Callable[[ArmEvent], None] | None, timeout: float | None) -> RecallResult:
        """A Recall stream, consumed to its one result; retried only before any event arrived."""
        started = False

        async def attempt(seconds: float) -> RecallResult:
            nonlocal started
            result: t.RecallResult | None = None
            call = self.memory.Recall(request, timeout=seconds)
            try:
                async for event in call:
                    started = True
                    which = event.WhichOneof("event")
                    if which == "arm" and on_arm is not None:
                        on_arm(ArmEvent.from_pb(event.arm))
                    elif which == "result":
                        result = event.result
            finally:
                call.cancel()
            if result is None:
                raise RecallError(grpc.StatusCode.INTERNAL, RECALL, "the stream ended without a result")
            return RecallResult.from_pb(result)

        return await self._unary(RECALL, timeout, attempt, lambda: not started)

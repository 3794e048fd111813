"""The blocking client: an agent runtime's call flow over the generated gRPC stubs.

Open a session (the snapshot for the cached prompt prefix, and its watermark), recall for each
turn with that watermark, cite what the model used, reject what the user says is wrong. Every
call has a deadline; calls are retried on UNAVAILABLE only (see retry.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import grpc

from recall_client import requests as rq
from recall_client._gen.memory.v1 import inspect_service_pb2_grpc as inspect_grpc
from recall_client._gen.memory.v1 import memory_service_pb2 as m
from recall_client._gen.memory.v1 import memory_service_pb2_grpc as memory_grpc
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w
from recall_client._gen.memory.v1 import write_service_pb2_grpc as write_grpc
from recall_client.errors import RecallError, from_rpc_error
from recall_client.identity import Identity, Tls, TokenSource, sync_channel
from recall_client.requests import SessionRef, SessionType, Surface, WorkingState, RejectionKind
from recall_client.results import ArmEvent, EpisodesPage, Erasure, RecallResult, Rejection, SearchResult, Trace, TurnRecall
from recall_client.retry import DEFAULT_RETRY, RetryPolicy, backoff_before_retry
from recall_client.write_methods import WriteMethods

T = TypeVar("T")

#: A call's deadline when neither it nor the client names one (the sidecar's own default).
DEFAULT_TIMEOUT = 2.0

RECALL = "MemoryService.Recall"


@dataclass(frozen=True)
class Session(SessionRef):
    """An open session: the snapshot, and the watermark every in-turn recall carries."""

    #: The session-open snapshot: put ``snapshot.rendered`` in the cached system prefix, once.
    snapshot: RecallResult = field(repr=False)
    client: RecallClient = field(repr=False, compare=False)

    def recall_for_turn(
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
        """An in-turn recall with this session's watermark (see ``RecallClient.recall_for_turn``)."""
        return self.client.recall_for_turn(
            self, turn_id, text, subjects=subjects, working_state=working_state, surface=surface, on_arm=on_arm, timeout=timeout
        )


class RecallClient(WriteMethods):
    """A blocking client for one principal of one sidecar.

    Args:
        address: ``"127.0.0.1:50051"``, or ``"unix:///run/recall/recall.sock"`` for the Unix socket.
        tenant_id, principal_id: sent as x-tenant-id / x-principal-id on every call; required with
            trusted headers, optional (and checked to agree) with a token or client certificate.
        token: a JWT bearer token, or a callable returning the current one (asked on every call).
        tls: TLS to the sidecar; with ``certificate_chain`` and ``private_key``, mTLS.
        timeout: the deadline, in seconds, of a call that names none; retries included.
        retry: retries on UNAVAILABLE.
        options, interceptors: passed to the gRPC channel.
        scope: the project the application works in: the origin scope of what ``remember`` writes
            and the project of appended episodes, unless a call names its own.

    Use it as a context manager, or call ``close()``.
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
        self.channel = sync_channel(address, self.identity, options, interceptors)
        #: The generated stubs on this client's channel (identity included), for every other RPC.
        self.memory = memory_grpc.MemoryServiceStub(self.channel)
        self.write = write_grpc.MemoryWriteServiceStub(self.channel)
        self.inspect = inspect_grpc.InspectServiceStub(self.channel)

    def __enter__(self) -> RecallClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the channel."""
        self.channel.close()

    # -- the call flow -------------------------------------------------------------------------

    def open_session(
        self,
        session_id: str | None = None,
        *,
        scope: str = "",
        goal: str | None = None,
        session_type: SessionType = "interactive",
        context_window_tokens: int = 0,
        surface: Surface | None = None,
        timeout: float | None = None,
    ) -> Session:
        """Opens a session: one snapshot recall, returned with the session that carries its watermark.

        Args:
            session_id: the conversation's id; generated when omitted.
            scope: the project the session works in.
            goal: the opening goal; fills the snapshot's priming slots.
            session_type: "interactive", "async" or "child": sets the snapshot's caps.
            context_window_tokens: the model's window; the snapshot never takes more than 2% of it.
        """
        sid = session_id or rq.new_id()
        snapshot = self._recall(rq.snapshot_request(sid, scope, session_type, context_window_tokens, goal, surface), None, timeout)
        return Session(sid, scope, snapshot.snapshot_watermark, snapshot, self)

    def recall_for_turn(
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
        """An in-turn recall: the stream is consumed, each arm's event goes to ``on_arm``.

        ``degraded`` is True when arms still running at the deadline were abandoned (a partial
        answer, not an error); ``rendered`` leads with the corrections to what the session was shown.
        """
        request = rq.turn_request(session, turn_id, text, subjects, working_state, surface)
        return TurnRecall.of(self._recall(request, on_arm, timeout))

    def search(
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
        """The agent's memory.search tool: a deliberate lookup (name the fact needed, e.g. "home city")."""
        request = rq.search_request(text, subjects, type_hints, scope, as_of, known_at, budget_tokens, max_items, session_id, turn_id, surface)
        return SearchResult.from_pb(self._unary("MemoryService.Search", timeout, lambda s: self.memory.Search(request, timeout=s)))

    def recall_episodes(
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
        """The agent's memory.recall_episodes tool: a session and/or time range, a page at a time."""
        request = rq.episodes_request(session_id, start_time, end_time, include_archival, page_size, page_token, budget_tokens, turn_id, surface)
        response = self._unary("MemoryService.RecallEpisodes", timeout, lambda s: self.memory.RecallEpisodes(request, timeout=s))
        return EpisodesPage.from_pb(response)

    def get_trace(self, trace_id: str = "", *, turn_id: str = "", viewing_surface: Surface | None = None, timeout: float | None = None) -> Trace:
        """A persisted trace: by ``trace_id`` (operator form) or by ``turn_id`` (the user view of a turn)."""
        request = m.GetTraceRequest(trace_id=trace_id, turn_id=turn_id)
        if viewing_surface is not None:
            request.viewing_surface.CopyFrom(viewing_surface.to_pb())
        return Trace.from_pb(self._unary("MemoryService.GetTrace", timeout, lambda s: self.memory.GetTrace(request, timeout=s)))

    def cite(self, trace_id: str, belief_ids: Sequence[str], *, turn_id: str = "", timeout: float | None = None) -> int:
        """Records the beliefs the model cited from a recall's block; ``turn_id`` when citing from a snapshot.

        Returns the citations newly recorded (a repeat counts 0).
        """
        request = w.RecordCitationsRequest(trace_id=trace_id, belief_ids=list(belief_ids), turn_id=turn_id)
        return self._unary("MemoryWriteService.RecordCitations", timeout, lambda s: self.write.RecordCitations(request, timeout=s)).recorded

    def reject(
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
        """The user says a belief is wrong.

        Args:
            kind: "not_true" retires it; "changed" supersedes it with ``correction`` (a Belief, or
                its protobuf JSON form); "not_here" corrects it for ``scope``; "unspecified" flags it.
            rejection_id: makes a repeat a no-op; generated once when omitted, and kept across this
                call's retries, so a retry never rejects twice.
        """
        rid = rejection_id or rq.new_id()
        request = rq.reject_request(rid, belief_id, kind, correction, scope, reason)
        response = self._unary("MemoryWriteService.RejectBelief", timeout, lambda s: self.write.RejectBelief(request, timeout=s))
        return Rejection(rid, response.store_position)

    def erase_principal(self, *, tenant_id: str | None = None, principal_id: str | None = None, timeout: float | None = None) -> Erasure:
        """Erases everything stored for this client's principal (ErasePrincipal).

        The request repeats the caller's ids as a confirmation: the client's own by default; pass
        them when the identity comes from a token or certificate alone.
        """
        tenant = tenant_id or self.identity.tenant_id
        principal = principal_id or self.identity.principal_id
        if not tenant or not principal:
            raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, "MemoryWriteService.ErasePrincipal", "tenant_id, principal_id: required to confirm the erase", 0)
        request = w.ErasePrincipalRequest(tenant_id=tenant, principal_id=principal)
        return Erasure.from_pb(self._unary("MemoryWriteService.ErasePrincipal", timeout, lambda s: self.write.ErasePrincipal(request, timeout=s)))

    # -- deadlines and retries -----------------------------------------------------------------

    def _unary(self, method: str, timeout: float | None, send: Callable[[float], T], can_retry: Callable[[], bool] = lambda: True) -> T:
        """One call under one deadline (``timeout`` seconds, retries included), retried when safe."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        attempt = 0
        while True:
            attempt += 1
            try:
                return send(max(0.001, deadline - time.monotonic()))
            except grpc.RpcError as error:
                failed = from_rpc_error(error, method, attempt)
            except RecallError as error:
                failed = RecallError(error.code, error.method, error.message, attempt)
            wait = backoff_before_retry(failed.code, attempt, self.retry, deadline - time.monotonic(), can_retry())
            if wait is None:
                raise failed
            time.sleep(wait)

    def _recall(self, request: m.RecallRequest, on_arm: Callable[[ArmEvent], None] | None, timeout: float | None) -> RecallResult:
        """A Recall stream, consumed to its one result; retried only before any event arrived."""
        started = False

        def attempt(seconds: float) -> RecallResult:
            nonlocal started
            result: t.RecallResult | None = None
            call = self.memory.Recall(request, timeout=seconds)
            try:
                for event in call:
                    started = True
                    which = event.WhichOneof("event")
                    if which == "arm" and on_arm is not None:
                        on_arm(ArmEvent.from_pb(event.arm))
                    elif which == "result":
                        result = event.result
            finally:
                call.cancel()  # a no-op once the stream ended; stops it when on_arm raised
            if result is None:
                raise RecallError(grpc.StatusCode.INTERNAL, RECALL, "the stream ended without a result")
            return RecallResult.from_pb(result)

        return self._unary(RECALL, timeout, attempt, lambda: not started)

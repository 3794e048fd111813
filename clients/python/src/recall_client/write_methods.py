"""The write helpers of ``RecallClient`` (blocking) and ``AsyncRecallClient`` (asyncio): getting memories in.

``remember(subject, statement)`` writes a belief with the defaults of ``writes.BELIEF_DEFAULTS``;
``replace`` writes a successor naming the old belief in ``supersedes`` (recall stops showing the
old one); ``retract`` and ``mark_conflict`` write a stored belief again with one change;
``append_episodes`` and ``remember_many`` take batches of 1 to 1000. Every id is chosen before the
call, so a retry after UNAVAILABLE writes the same rows. See docs/writing-memories.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from recall_client._gen.memory.v1 import inspect_service_pb2 as i
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w
from recall_client import writes as wr
from recall_client.errors import RecallError
from recall_client.writes import Appended, Authority, BeliefStatus, Portability, Replaced, ScopeLevel, Sensitivity, Written, WrittenMany

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from recall_client._gen.memory.v1 import inspect_service_pb2_grpc as inspect_grpc
    from recall_client._gen.memory.v1 import write_service_pb2_grpc as write_grpc

T = TypeVar("T")


def _fields(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _get_request(belief_id: str) -> i.GetBeliefRequest:
    # Its own principal's belief at every sensitivity: the caller wrote it.
    return i.GetBeliefRequest(belief_id=belief_id, viewing_surface=t.Surface(sensitivity_ceiling=t.SENSITIVITY_RESTRICTED))


def _stored(response: i.GetBeliefResponse, belief_id: str, rewrite: bool) -> t.Belief:
    if rewrite and response.belief.withheld_by_safety:
        raise wr.withheld_error(belief_id, response.belief.withheld_by_safety)
    return response.belief.belief


def _written(belief_id: str, response: w.PutBeliefsResponse) -> Written:
    return Written(belief_id, response.written, response.store_position, tuple(response.warnings))


class WriteMethods:
    """The blocking write helpers (mixed into ``RecallClient``)."""

    if TYPE_CHECKING:
        scope: str
        write: write_grpc.MemoryWriteServiceStub
        inspect: inspect_grpc.InspectServiceStub

        def _unary(self, method: str, timeout: float | None, send: Callable[[float], T], can_retry: Callable[[], bool] = ...) -> T: ...

    def remember(
        self,
        subject: str,
        statement: str,
        *,
        belief_id: str | None = None,
        belief_type: str | None = None,
        predicate_key: str | None = None,
        status: BeliefStatus | None = None,
        confidence: float | None = None,
        authority: Authority | None = None,
        origin_scope: str | None = None,
        scope_level: ScopeLevel | None = None,
        portability: Portability | None = None,
        sensitivity: Sensitivity | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        expires_hint: datetime | None = None,
        supersedes: Sequence[str] = (),
        conflicts_with: Sequence[str] = (),
        source_episode_ids: Sequence[str] = (),
        timeout: float | None = None,
    ) -> Written:
        """Writes one belief; what is not given takes the documented default (``writes.BELIEF_DEFAULTS``).

        ``origin_scope`` defaults to the client's ``scope``; ``belief_id`` to a new UUID v4.
        """
        fields = _fields(
            belief_id=belief_id, subject=subject, statement=statement, belief_type=belief_type, predicate_key=predicate_key,
            status=status, confidence=confidence, authority=authority, origin_scope=origin_scope, scope_level=scope_level,
            portability=portability, sensitivity=sensitivity, valid_from=valid_from, valid_to=valid_to, expires_hint=expires_hint,
            supersedes=list(supersedes), conflicts_with=list(conflicts_with), source_episode_ids=list(source_episode_ids),
        )  # fmt: skip
        many = self.remember_many([fields], timeout=timeout)
        return Written(many.belief_ids[0], many.written, many.store_position, many.warnings)

    def remember_many(self, beliefs: Sequence[Mapping[str, Any] | t.Belief], *, timeout: float | None = None) -> WrittenMany:
        """Writes 1 to 1000 beliefs in one atomic call, each mapping with ``remember``'s defaults."""
        request = _put_many(beliefs, self.scope)
        response = self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s))
        return WrittenMany(tuple(b.belief_id for b in request.beliefs), response.written, response.store_position, tuple(response.warnings))

    def replace(self, old_id: str, statement: str, *, timeout: float | None = None, **fields: Any) -> Replaced:
        """Writes a successor of ``old_id``: its subject, type, predicate key, origin, scope level,
        portability and sensitivity unless given (any ``remember`` keyword), superseding it."""
        old = _stored(self._unary(wr.GET, timeout, lambda s: self.inspect.GetBelief(_get_request(old_id), timeout=s)), old_id, False)
        written = self.remember_many([wr.successor(old, statement, fields, self.scope)], timeout=timeout)
        return Replaced(written.belief_ids[0], written.written, written.store_position, written.warnings, replaced=old.belief_id)

    def retract(self, belief_id: str, *, at: datetime | None = None, timeout: float | None = None) -> Written:
        """Withdraws a belief as known (sets retracted_at): it leaves live recall; ``known_at`` before then still sees it."""
        old = self._rewritable(belief_id, timeout)
        if old.HasField("retracted_at"):
            return Written(old.belief_id, 0, 0)
        request = wr.put_request([wr.retracted(old, at)])
        return _written(old.belief_id, self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s)))

    def mark_conflict(self, belief_id: str, other_id: str, *, timeout: float | None = None) -> Written:
        """Records that two beliefs contradict each other: both are shown, each naming the other."""
        try:
            old, partner = self._rewritable(belief_id, timeout), other_id
        except RecallError as error:
            if error.status != "FAILED_PRECONDITION":
                raise
            old, partner = self._rewritable(other_id, timeout), belief_id  # a conflict is named on either side
        changed = wr.in_conflict(old, partner)
        if changed is None:
            return Written(old.belief_id, 0, 0)
        request = wr.put_request([changed])
        return _written(old.belief_id, self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s)))

    def append_episodes(self, episodes: Sequence[Mapping[str, Any] | t.Episode], *, timeout: float | None = None) -> Appended:
        """Appends 1 to 1000 episodes in one atomic call (ids, times, order and project defaulted)."""
        request = wr.episodes_request(episodes, self.scope)
        response = self._unary(wr.APPEND, timeout, lambda s: self.write.AppendEpisodes(request, timeout=s))
        return Appended(tuple(e.episode_id for e in request.episodes), response.appended, response.store_position)

    def _rewritable(self, belief_id: str, timeout: float | None) -> t.Belief:
        return _stored(self._unary(wr.GET, timeout, lambda s: self.inspect.GetBelief(_get_request(belief_id), timeout=s)), belief_id, True)


class AsyncWriteMethods:
    """The asyncio write helpers (mixed into ``AsyncRecallClient``); the same arguments as ``WriteMethods``."""

    if TYPE_CHECKING:
        scope: str
        write: write_grpc.MemoryWriteServiceAsyncStub
        inspect: inspect_grpc.InspectServiceAsyncStub

        async def _unary(
            self, method: str, timeout: float | None, send: Callable[[float], Awaitable[T]], can_retry: Callable[[], bool] = ...
        ) -> T: ...

    async def remember(self, subject: str, statement: str, *, timeout: float | None = None, **fields: Any) -> Written:
        """``WriteMethods.remember``: the same keywords and defaults."""
        many = await self.remember_many([{**fields, "subject": subject, "statement": statement}], timeout=timeout)
        return Written(many.belief_ids[0], many.written, many.store_position, many.warnings)

    async def remember_many(self, beliefs: Sequence[Mapping[str, Any] | t.Belief], *, timeout: float | None = None) -> WrittenMany:
        request = _put_many(beliefs, self.scope)
        response: w.PutBeliefsResponse = await self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s))
        return WrittenMany(tuple(b.belief_id for b in request.beliefs), response.written, response.store_position, tuple(response.warnings))

    async def replace(self, old_id: str, statement: str, *, timeout: float | None = None, **fields: Any) -> Replaced:
        response: i.GetBeliefResponse = await self._unary(wr.GET, timeout, lambda s: self.inspect.GetBelief(_get_request(old_id), timeout=s))
        old = _stored(response, old_id, False)
        written = await self.remember_many([wr.successor(old, statement, fields, self.scope)], timeout=timeout)
        return Replaced(written.belief_ids[0], written.written, written.store_position, written.warnings, replaced=old.belief_id)

    async def retract(self, belief_id: str, *, at: datetime | None = None, timeout: float | None = None) -> Written:
        old = await self._rewritable(belief_id, timeout)
        if old.HasField("retracted_at"):
            return Written(old.belief_id, 0, 0)
        request = wr.put_request([wr.retracted(old, at)])
        return _written(old.belief_id, await self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s)))

    async def mark_conflict(self, belief_id: str, other_id: str, *, timeout: float | None = None) -> Written:
        try:
            old, partner = await self._rewritable(belief_id, timeout), other_id
        except RecallError as error:
            if error.status != "FAILED_PRECONDITION":
                raise
            old, partner = await self._rewritable(other_id, timeout), belief_id
        changed = wr.in_conflict(old, partner)
        if changed is None:
            return Written(old.belief_id, 0, 0)
        request = wr.put_request([changed])
        return _written(old.belief_id, await self._unary(wr.PUT, timeout, lambda s: self.write.PutBeliefs(request, timeout=s)))

    async def append_episodes(self, episodes: Sequence[Mapping[str, Any] | t.Episode], *, timeout: float | None = None) -> Appended:
        request = wr.episodes_request(episodes, self.scope)
        response: w.AppendEpisodesResponse = await self._unary(wr.APPEND, timeout, lambda s: self.write.AppendEpisodes(request, timeout=s))
        return Appended(tuple(e.episode_id for e in request.episodes), response.appended, response.store_position)

    async def _rewritable(self, belief_id: str, timeout: float | None) -> t.Belief:
        response: i.GetBeliefResponse = await self._unary(wr.GET, timeout, lambda s: self.inspect.GetBelief(_get_request(belief_id), timeout=s))
        return _stored(response, belief_id, True)


def _put_many(beliefs: Sequence[Mapping[str, Any] | t.Belief], scope: str) -> w.PutBeliefsRequest:
    problems: list[str] = []
    messages = [
        wr.belief(b if isinstance(b, t.Belief) else wr.with_defaults(b, scope), f"beliefs[{n}]", problems) for n, b in enumerate(beliefs)
    ]
    wr.invalid(wr.PUT, problems)
    return wr.put_request(messages)

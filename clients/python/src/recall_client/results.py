"""Typed results: the sidecar's answers as frozen dataclasses.

Enum values are their short lowercase names (``"active"``, ``"high"``, ``"user"``), times are
timezone-aware ``datetime`` (None when unset), and every result keeps the protobuf message it
came from as ``raw`` for the fields not lifted here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from recall_client._gen.memory.v1 import memory_service_pb2 as m
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w


def enum_name(message: Message, field_name: str) -> str:
    """An enum field's value name without its type prefix, lowercased: BELIEF_STATUS_ACTIVE is "active"."""
    descriptor = message.DESCRIPTOR.fields_by_name[field_name].enum_type
    assert descriptor is not None
    value = descriptor.values_by_number.get(getattr(message, field_name))
    if value is None:
        return str(getattr(message, field_name))
    prefix = "".join("_" + c if c.isupper() and i > 0 else c for i, c in enumerate(descriptor.name)).upper() + "_"
    return value.name.removeprefix(prefix).lower()


def timestamp(message: Message, field_name: str) -> datetime | None:
    """A Timestamp field as an aware UTC datetime, or None when it is unset."""
    if not message.HasField(field_name):
        return None
    value = getattr(message, field_name)
    assert isinstance(value, Timestamp)
    return value.ToDatetime(tzinfo=timezone.utc)


@dataclass(frozen=True)
class RecalledBelief:
    """One belief of a recall's block, in rendered order."""

    belief_id: str
    subject: str
    #: Empty when blocked: a blocked statement never leaves the server.
    statement: str
    belief_type: str
    status: str
    #: "high", "medium" or "low": what the block shows instead of a confidence number.
    confidence_band: str
    #: "user" (user-stated), "affirmed" or "inferred".
    authority: str
    origin_scope: str
    portability: str
    #: True when recalled outside origin_scope (rendered "(learned in <project>)").
    carried: bool
    valid_from: datetime | None
    valid_to: datetime | None
    score: float
    arms: tuple[str, ...]
    conflict_with: tuple[str, ...]
    #: Withheld by the safety pass: rendered as a [BLOCKED] placeholder.
    blocked: bool

    @staticmethod
    def from_pb(b: t.RecalledBelief) -> RecalledBelief:
        return RecalledBelief(
            belief_id=b.belief_id,
            subject=b.subject,
            statement=b.statement,
            belief_type=b.belief_type,
            status=enum_name(b, "status"),
            confidence_band=enum_name(b, "confidence_band"),
            authority=enum_name(b, "authority"),
            origin_scope=b.origin_scope,
            portability=enum_name(b, "portability"),
            carried=b.carried,
            valid_from=timestamp(b, "valid_from"),
            valid_to=timestamp(b, "valid_to"),
            score=b.score,
            arms=tuple(b.arms),
            conflict_with=tuple(b.conflict_with),
            blocked=b.blocked,
        )


@dataclass(frozen=True)
class Correction:
    """A snapshot belief that no longer holds (its line leads an in-turn block)."""

    belief_id: str
    #: The belief that replaced it; empty when it was retired without a successor.
    superseded_by: str
    no_longer_holds_as_of: datetime | None


@dataclass(frozen=True)
class EpisodeScope:
    """Where the event log is worth reading: pass it to ``recall_episodes``."""

    session_id: str
    start_time: datetime | None
    end_time: datetime | None
    subjects: tuple[str, ...]


@dataclass(frozen=True)
class RecallResult:
    """The answer of a recall (a snapshot, an in-turn recall or a search)."""

    items: tuple[RecalledBelief, ...]
    #: The trust-labelled memory block; byte-stable for the same belief set.
    rendered: str
    tokens: int
    #: True when eligible items were dropped for the item cap or token budget.
    truncated: bool
    #: Arms abandoned at the deadline; the result is ranked without them.
    arms_degraded: tuple[str, ...]
    #: The id of the trace recorded for this result (``get_trace``, ``cite``).
    trace_id: str
    #: The store position the result reflects (a snapshot's is the session's watermark).
    snapshot_watermark: int
    #: True when the snapshot bytes came from the sidecar's cache.
    from_cache: bool
    corrections: tuple[Correction, ...]
    #: True when the agent should consider ``recall_episodes`` with ``suggested_episode_scope``.
    episodic_search_advised: bool
    suggested_episode_scope: EpisodeScope | None
    escalation_reason: str
    #: None when the query had no as_of and the principal was never written (``no_memory``).
    as_of: datetime | None
    known_at: datetime | None
    #: True when the principal holds no memory at all (never written, or erased with nothing
    #: since): the block is empty because there is nothing to recall. Check the tenant and principal.
    no_memory: bool
    raw: t.RecallResult = field(repr=False, compare=False)

    @staticmethod
    def from_pb(r: t.RecallResult) -> RecallResult:
        scope = r.suggested_episode_scope
        return RecallResult(
            items=tuple(RecalledBelief.from_pb(b) for b in r.items),
            rendered=r.rendered,
            tokens=r.tokens,
            truncated=r.truncated,
            arms_degraded=tuple(r.arms_degraded),
            trace_id=r.trace_id,
            snapshot_watermark=r.snapshot_watermark,
            from_cache=r.from_cache,
            corrections=tuple(
                Correction(c.belief_id, c.superseded_by, timestamp(c, "no_longer_holds_as_of")) for c in r.corrections
            ),
            episodic_search_advised=r.episodic_search_advised,
            suggested_episode_scope=(
                EpisodeScope(scope.session_id, timestamp(scope, "start_time"), timestamp(scope, "end_time"), tuple(scope.subjects))
                if r.HasField("suggested_episode_scope")
                else None
            ),
            escalation_reason=enum_name(r, "escalation_reason"),
            as_of=timestamp(r, "as_of"),
            known_at=timestamp(r, "known_at"),
            no_memory=r.no_memory,
            raw=r,
        )


@dataclass(frozen=True)
class ArmCandidate:
    belief_id: str
    #: 1-based rank within the arm.
    rank: int


@dataclass(frozen=True)
class ArmEvent:
    """One recall arm finished (or was abandoned at the deadline): what ``on_arm`` receives."""

    arm: str
    candidates: tuple[ArmCandidate, ...]
    latency_ms: int
    #: True when the arm missed the deadline; its candidates are then empty.
    degraded: bool

    @staticmethod
    def from_pb(a: m.ArmResult) -> ArmEvent:
        return ArmEvent(a.arm, tuple(ArmCandidate(c.belief_id, c.rank) for c in a.candidates), a.latency_ms, a.degraded)


@dataclass(frozen=True)
class TurnRecall:
    """An in-turn recall's outcome."""

    result: RecallResult
    #: Put this in the user turn. Correction lines come first; it may be only those, or empty.
    rendered: str
    trace_id: str
    #: True when arms still running at the deadline were abandoned: a partial answer, not an error.
    degraded: bool
    #: The abandoned or failed arms.
    arms_degraded: tuple[str, ...]

    @staticmethod
    def of(result: RecallResult) -> TurnRecall:
        return TurnRecall(result, result.rendered, result.trace_id, len(result.arms_degraded) > 0, result.arms_degraded)


@dataclass(frozen=True)
class SearchResult:
    """A search's answer and the scope it ran from."""

    result: RecallResult
    resolved_scope: str
    #: "request", "session_header", "session_snapshot" or "none".
    scope_source: str

    @staticmethod
    def from_pb(r: m.SearchResponse) -> SearchResult:
        return SearchResult(RecallResult.from_pb(r.result), r.resolved_scope, enum_name(r, "scope_source"))


@dataclass(frozen=True)
class Episode:
    """One event of the episodic log."""

    episode_id: str
    session_id: str
    occurred_at: datetime | None
    sequence: int
    actor: str
    kind: str
    #: Empty when the safety pass withheld it.
    content: str
    project: str
    archival: bool
    sensitivity: str

    @staticmethod
    def from_pb(e: t.Episode) -> Episode:
        return Episode(
            e.episode_id, e.session_id, timestamp(e, "occurred_at"), e.sequence, e.actor, e.kind, e.content,
            e.project, e.archival, enum_name(e, "sensitivity"),
        )


@dataclass(frozen=True)
class EpisodesPage:
    """One page of ``recall_episodes``."""

    episodes: tuple[Episode, ...]
    #: Pass it back as ``page_token`` for the next page; empty on the last.
    next_page_token: str
    tokens: int
    truncated: bool
    rendered: str
    trace_id: str
    withheld_episode_ids: tuple[str, ...]
    clipped_episode_ids: tuple[str, ...]

    @staticmethod
    def from_pb(r: m.RecallEpisodesResponse) -> EpisodesPage:
        return EpisodesPage(
            tuple(Episode.from_pb(e) for e in r.episodes), r.next_page_token, r.tokens, r.truncated, r.rendered,
            r.trace_id, tuple(r.withheld_episode_ids), tuple(r.clipped_episode_ids),
        )


@dataclass(frozen=True)
class Trace:
    """``get_trace``'s answer: ``trace`` in the operator form (by trace id), ``view`` in the user form (by turn id)."""

    trace: t.RecallTrace | None
    view: t.RecallTraceView | None

    @staticmethod
    def from_pb(r: m.GetTraceResponse) -> Trace:
        return Trace(r.trace if r.HasField("trace") else None, r.view if r.HasField("view") else None)


@dataclass(frozen=True)
class Rejection:
    #: The id the rejection was sent with: sending it again is a no-op.
    rejection_id: str
    store_position: int


@dataclass(frozen=True)
class Erasure:
    #: Rows deleted, by table (every table listed, 0 included).
    deleted: dict[str, int]
    store_position: int

    @staticmethod
    def from_pb(r: w.ErasePrincipalResponse) -> Erasure:
        return Erasure(dict(r.deleted), r.store_position)

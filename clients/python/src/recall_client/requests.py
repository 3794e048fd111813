"""What the client sends: the inputs it takes and the protobuf requests built from them.

Pure functions shared by the blocking and the asyncio client.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from recall_client._gen.memory.v1 import memory_service_pb2 as m
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w
from recall_client.errors import RecallError

SessionType = Literal["interactive", "async", "child"]
RejectionKind = Literal["unspecified", "not_true", "changed", "not_here"]
Ceiling = Literal["public", "personal", "confidential", "restricted"]

SESSION_TYPES: dict[str, m.SessionType.ValueType] = {
    "interactive": m.SESSION_TYPE_INTERACTIVE,
    "async": m.SESSION_TYPE_ASYNC,
    "child": m.SESSION_TYPE_CHILD,
}
REJECTION_KINDS: dict[str, w.RejectionKind.ValueType] = {
    "unspecified": w.REJECTION_KIND_UNSPECIFIED,
    "not_true": w.REJECTION_KIND_NOT_TRUE,
    "changed": w.REJECTION_KIND_CHANGED,
    "not_here": w.REJECTION_KIND_NOT_HERE,
}
CEILINGS: dict[str, t.Sensitivity.ValueType] = {
    "public": t.SENSITIVITY_PUBLIC,
    "personal": t.SENSITIVITY_PERSONAL,
    "confidential": t.SENSITIVITY_CONFIDENTIAL,
    "restricted": t.SENSITIVITY_RESTRICTED,
}


M = TypeVar("M", bound=Message)

# The range of each protobuf integer type: protobuf raises a bare ValueError (or TypeError) outside it.
_INT_RANGES: dict[int, tuple[int, int]] = {
    **dict.fromkeys((FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32), (-(2**31), 2**31 - 1)),
    **dict.fromkeys((FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64), (-(2**63), 2**63 - 1)),
    **dict.fromkeys((FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32), (0, 2**32 - 1)),
    **dict.fromkeys((FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64), (0, 2**64 - 1)),
}


def build(cls: type[M], method: str, **fields: Any) -> M:
    """``cls(**fields)``, with each integer field checked first, so a bad one is the client's one
    exception type naming the field (``RecallError`` INVALID_ARGUMENT, 0 attempts), not protobuf's
    ``ValueError: Value out of range``. Every request with an integer field is built here."""
    for name, value in fields.items():
        limits = _INT_RANGES.get(cls.DESCRIPTOR.fields_by_name[name].type)
        if limits is None or value is None:
            continue
        try:
            number = operator.index(value)
        except TypeError:
            raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, method, f"{name}: must be an integer, not {type(value).__name__}", 0) from None
        low, high = limits
        if not low <= number <= high:
            raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, method, f"{name}: must be between {low} and {high}, not {number}", 0)
    return cls(**fields)


@dataclass(frozen=True)
class Surface:
    """The surface a block is rendered for; its ceiling bounds what can be shown."""

    surface_id: str = ""
    #: None: the sidecar's default ceiling (RECALL_DEFAULT_SENSITIVITY_CEILING).
    sensitivity_ceiling: Ceiling | None = None

    def to_pb(self) -> t.Surface:
        ceiling = CEILINGS[self.sensitivity_ceiling] if self.sensitivity_ceiling else t.SENSITIVITY_UNSPECIFIED
        return t.Surface(surface_id=self.surface_id, sensitivity_ceiling=ceiling)


@dataclass(frozen=True)
class WorkingState:
    """What the agent is working on; the sidecar's query former joins it to the turn's query."""

    objective: str = ""
    open_questions: Sequence[str] = field(default_factory=tuple)
    active_entities: Sequence[str] = field(default_factory=tuple)
    current_message: str = ""

    def to_pb(self) -> m.WorkingState:
        return m.WorkingState(
            objective=self.objective,
            open_questions=list(self.open_questions),
            active_entities=list(self.active_entities),
            current_message=self.current_message,
        )


@dataclass(frozen=True)
class SessionRef:
    """A session's state for in-turn recalls: its id, project and snapshot watermark."""

    session_id: str
    scope: str
    #: The snapshot's store position: beliefs written after it are the in-turn recall's delta.
    watermark: int


def new_id() -> str:
    """A UUID in its canonical lowercase text form."""
    return str(uuid.uuid4())


def to_timestamp(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def snapshot_request(
    session_id: str, scope: str, session_type: SessionType, context_window_tokens: int, goal: str | None, surface: Surface | None
) -> m.RecallRequest:
    if session_type not in SESSION_TYPES:
        raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, "MemoryService.Recall", f"session_type: must be one of {', '.join(SESSION_TYPES)}", 0)
    query = t.RecallQuery(current_scope=scope)
    if goal is not None:
        query.text = goal
    request = build(
        m.RecallRequest,
        "MemoryService.Recall",
        moment=t.MOMENT_SNAPSHOT,
        session_id=session_id,
        session_type=SESSION_TYPES[session_type],
        context_window_tokens=context_window_tokens,
        query=query,
    )
    if surface is not None:
        request.surface.CopyFrom(surface.to_pb())
    return request


def turn_request(
    session: SessionRef,
    turn_id: str,
    text: str | None,
    subjects: Sequence[str],
    working_state: WorkingState | None,
    surface: Surface | None,
) -> m.RecallRequest:
    query = t.RecallQuery(current_scope=session.scope, subjects=list(subjects))
    if text is not None:
        query.text = text
    request = build(
        m.RecallRequest,
        "MemoryService.Recall",
        moment=t.MOMENT_IN_TURN,
        session_id=session.session_id,
        turn_id=turn_id,
        snapshot_watermark=session.watermark,
        query=query,
    )
    if working_state is not None:
        request.working_state.CopyFrom(working_state.to_pb())
    if surface is not None:
        request.surface.CopyFrom(surface.to_pb())
    return request


def search_request(
    text: str,
    subjects: Sequence[str],
    type_hints: Sequence[str],
    scope: str,
    as_of: datetime | None,
    known_at: datetime | None,
    budget_tokens: int,
    max_items: int,
    session_id: str,
    turn_id: str,
    surface: Surface | None,
) -> m.SearchRequest:
    request = build(
        m.SearchRequest,
        "MemoryService.Search",
        text=text,
        subjects=list(subjects),
        type_hints=list(type_hints),
        scope=scope,
        budget_tokens=budget_tokens,
        max_items=max_items,
        session_id=session_id,
        turn_id=turn_id,
        as_of=to_timestamp(as_of),
        known_at=to_timestamp(known_at),
    )
    if surface is not None:
        request.surface.CopyFrom(surface.to_pb())
    return request


def episodes_request(
    session_id: str,
    start_time: datetime | None,
    end_time: datetime | None,
    include_archival: bool,
    page_size: int,
    page_token: str,
    budget_tokens: int,
    turn_id: str,
    surface: Surface | None,
) -> m.RecallEpisodesRequest:
    request = build(
        m.RecallEpisodesRequest,
        "MemoryService.RecallEpisodes",
        session_id=session_id,
        start_time=to_timestamp(start_time),
        end_time=to_timestamp(end_time),
        include_archival=include_archival,
        page_size=page_size,
        page_token=page_token,
        budget_tokens=budget_tokens,
        turn_id=turn_id,
    )
    if surface is not None:
        request.surface.CopyFrom(surface.to_pb())
    return request


def belief(value: t.Belief | Mapping[str, Any]) -> t.Belief:
    """A Belief message, or one from its protobuf JSON form (as in a `recall import` line's "belief")."""
    if isinstance(value, t.Belief):
        return value
    return json_format.ParseDict(dict(value), t.Belief())


def reject_request(
    rejection_id: str,
    belief_id: str,
    kind: RejectionKind,
    correction: t.Belief | Mapping[str, Any] | None,
    scope: str,
    reason: str,
) -> w.RejectBeliefRequest:
    if kind not in REJECTION_KINDS:
        raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, "MemoryWriteService.RejectBelief", f"kind: must be one of {', '.join(REJECTION_KINDS)}", 0)
    request = w.RejectBeliefRequest(rejection_id=rejection_id, belief_id=belief_id, kind=REJECTION_KINDS[kind], scope=scope, reason=reason)
    if correction is not None:
        try:
            request.correction.CopyFrom(belief(correction))
        except json_format.ParseError as error:
            raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, "MemoryWriteService.RejectBelief", f"correction: {error}", 0) from error
    return request

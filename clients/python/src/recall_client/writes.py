"""What the write helpers send: beliefs and episodes from what a caller passes, and what comes back.

Pure functions shared by the blocking and the asyncio client (write_methods.py). A belief or an
episode is keyword arguments or a mapping in the protobuf-JSON shape of an import line
(``belief_id``, ``"status": "BELIEF_STATUS_ACTIVE"``; camelCase keys too). Enum values may be the
friendly names of the Literal types below (``"active"``, ``"user"``, ``"portable"``), the protobuf
names, or their numbers; times are ``datetime`` (naive means UTC), RFC 3339 strings, or Timestamps.
What cannot be encoded (an unknown field, a word that is no enum value, text where a number goes)
is refused before sending, every problem at once and by the field's path, as INVALID_ARGUMENT; the
sidecar checks the rest the same way (required fields, ranges). See docs/writing-memories.md.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, TypeVar

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client._gen.memory.v1 import write_service_pb2 as w
from recall_client.errors import RecallError

BeliefStatus = Literal["active", "provisional", "superseded", "expired"]
Authority = Literal["user", "affirmed", "inferred"]
Portability = Literal["portable", "contextual", "local"]
ScopeLevel = Literal["project", "user", "global"]
Sensitivity = Literal["public", "personal", "confidential", "restricted"]

#: What a plain ``remember(subject, statement)`` means: something the user said about themselves,
#: to be used everywhere, at full weight. Each is a keyword argument of ``remember``.
BELIEF_DEFAULTS: Mapping[str, Any] = {
    "belief_type": "preference",
    "status": "active",
    "confidence": 0.9,
    "authority": "user",
    "scope_level": "user",
    "portability": "portable",
}

PUT = "MemoryWriteService.PutBeliefs"
APPEND = "MemoryWriteService.AppendEpisodes"
GET = "InspectService.GetBelief"

M = TypeVar("M", bound=Message)
#: A field's descriptor: google.protobuf's FieldDescriptor, pure Python or upb's (their stubs differ).
Field = Any
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True)
class Written:
    """What a belief write did."""

    #: The belief written (generated when the input had none).
    belief_id: str
    #: 1 when the row was inserted or changed, 0 for an identical re-write (or nothing to do).
    written: int
    #: The principal's store position after the write; 0 when nothing was sent.
    store_position: int
    #: PutBeliefsResponse.warnings: e.g. an id whose short id another belief already has.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class WrittenMany:
    """What a batch of beliefs did; ``belief_ids`` in the order given."""

    belief_ids: tuple[str, ...]
    written: int
    store_position: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Replaced(Written):
    """A successor written: ``replaced`` is the belief it supersedes."""

    replaced: str = ""


@dataclass(frozen=True)
class Appended:
    """Episodes appended (an id already there counts 0); ``episode_ids`` in the order given."""

    episode_ids: tuple[str, ...]
    appended: int
    store_position: int


def new_id() -> str:
    """A random UUID v4: a time-ordered v7's first eight hex digits (its short id) repeat for a minute."""
    return str(uuid.uuid4())


def invalid(method: str, problems: Sequence[str]) -> None:
    """Raises one INVALID_ARGUMENT listing every problem, as the sidecar words its own."""
    if problems:
        raise RecallError(grpc.StatusCode.INVALID_ARGUMENT, method, "; ".join(problems), 0)


def with_defaults(fields: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """A belief's fields after remember's defaults (the given ones win; None means "the default")."""
    given = {k: v for k, v in fields.items() if v is not None}
    out: dict[str, Any] = {**BELIEF_DEFAULTS, **({"origin_scope": scope} if scope else {})}
    if not any(k in given for k in ("belief_id", "beliefId")):
        out["belief_id"] = new_id()
    # A camelCase key replaces the default's snake_case one: one value per field.
    for key, value in given.items():
        out.pop(_snake(key), None)
        out[key] = value
    return out


def belief(fields: Mapping[str, Any] | t.Belief, at: str, problems: list[str]) -> t.Belief:
    return fields if isinstance(fields, t.Belief) else message(t.Belief(), fields, at, problems)


def episode(fields: Mapping[str, Any] | t.Episode, at: str, problems: list[str]) -> t.Episode:
    return fields if isinstance(fields, t.Episode) else message(t.Episode(), fields, at, problems)


def put_request(beliefs: Sequence[t.Belief]) -> w.PutBeliefsRequest:
    return w.PutBeliefsRequest(beliefs=list(beliefs))


def successor(old: t.Belief, statement: str, fields: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """``replace``'s belief: the old one's subject, kind and scope unless given; it supersedes the old one."""
    inherited = {
        "subject": old.subject,
        "belief_type": old.belief_type,
        "predicate_key": old.predicate_key,
        "origin_scope": old.origin_scope,
        "scope_level": old.scope_level,
        "portability": old.portability,
        "sensitivity": old.sensitivity,
    }
    inherited = {k: v for k, v in inherited.items() if v not in ("", 0)}  # unset on the old one: the defaults
    given = {k: v for k, v in fields.items() if v is not None}
    supersedes = [old.belief_id, *given.pop("supersedes", ())]
    return {**with_defaults({**inherited, **given}, scope), "statement": statement, "supersedes": supersedes}


def retracted(old: t.Belief, at: datetime | None) -> t.Belief:
    """The stored belief with retracted_at set: now, or when given, but never before it was recorded."""
    out = t.Belief()
    out.CopyFrom(old)
    when = at or datetime.now(timezone.utc)
    stamp = Timestamp()
    stamp.FromDatetime(when)
    if old.HasField("recorded_at") and old.recorded_at.ToNanoseconds() > stamp.ToNanoseconds():
        stamp.CopyFrom(old.recorded_at)
    out.retracted_at.CopyFrom(stamp)
    return out


def in_conflict(old: t.Belief, other_id: str) -> t.Belief | None:
    """The stored belief naming ``other_id`` among its conflicts; None when it already does."""
    partner = other_id.lower()
    if partner in old.conflicts_with:
        return None
    out = t.Belief()
    out.CopyFrom(old)
    out.conflicts_with.append(partner)
    return out


def withheld_error(belief_id: str, reason: str) -> RecallError:
    return RecallError(
        grpc.StatusCode.FAILED_PRECONDITION,
        PUT,
        f"belief {belief_id} is withheld by the safety pass ({reason}): its statement never leaves the sidecar, "
        'so it cannot be written again from here; reject it instead (reject(belief_id, "not_true"))',
        0,
    )


def episodes_request(inputs: Sequence[Mapping[str, Any] | t.Episode], scope: str) -> w.AppendEpisodesRequest:
    """Each episode with its defaults: a new id, now, its place in the batch as sequence, kind "message", the client's scope."""
    problems: list[str] = []
    now = datetime.now(timezone.utc)
    episodes = []
    for i, value in enumerate(inputs):
        if isinstance(value, t.Episode):
            episodes.append(value)
            continue
        given = {k: v for k, v in value.items() if v is not None}
        defaults: dict[str, Any] = {"episode_id": new_id(), "occurred_at": now, "sequence": i, "kind": "message"}
        if scope:
            defaults["project"] = scope
        for key in given:
            defaults.pop(_snake(key), None)
        episodes.append(episode({**defaults, **given}, f"episodes[{i}]", problems))
    invalid(APPEND, problems)
    return w.AppendEpisodesRequest(episodes=episodes)


_CITED = re.compile(r"\[m:([0-9a-fA-F]{8,32})\]")


def cited_ids(text: str, belief_ids: Sequence[str]) -> list[str]:
    """The full ids, among a recall's ``belief_ids``, of the ``[m:…]`` a text cites (what to pass to ``cite``).

    A short id naming no returned belief, or several, is left out.
    """
    out: list[str] = []
    for match in _CITED.finditer(text):
        prefix = match.group(1).lower()
        named = [b for b in belief_ids if b.replace("-", "").lower().startswith(prefix)]
        if len(named) == 1 and named[0] not in out:
            out.append(named[0])
    return out


# -- encoding, field by field -----------------------------------------------------------------


def message(into: M, fields: Mapping[str, Any], at: str, problems: list[str]) -> M:
    """``fields`` set on ``into`` one by one; a field that cannot be encoded adds a problem and stays unset."""
    if not isinstance(fields, Mapping):
        problems.append(f"{at}: must be a mapping")
        return into
    descriptor = into.DESCRIPTOR
    by_json = {f.json_name: f for f in descriptor.fields}
    for key, value in fields.items():
        field = descriptor.fields_by_name.get(key) or by_json.get(key)
        if field is None:
            problems.append(f"{at}.{key}: is not a field of {descriptor.name}")
            continue
        if value is None:
            continue
        _set(into, field, value, f"{at}.{field.name}", problems)
    return into


def _set(into: Message, field: Field, value: Any, path: str, problems: list[str]) -> None:
    # is_repeated since protobuf 6.31 (label is gone in 7); label before it.
    flag = getattr(field, "is_repeated", None)
    repeated = bool(flag) if flag is not None else getattr(field, "label", 0) == FieldDescriptor.LABEL_REPEATED
    if repeated:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            problems.append(f"{path}: must be a list")
            return
        converted = [_scalar(field, v, f"{path}[{i}]", problems) for i, v in enumerate(value)]
        if all(c is not None for c in converted):
            getattr(into, field.name).extend(converted)
        return
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        stamp = _timestamp(value, path, problems)
        if stamp is not None:
            getattr(into, field.name).CopyFrom(stamp)
        return
    converted = _scalar(field, value, path, problems)
    if converted is not None:
        setattr(into, field.name, converted)


def _scalar(field: Field, value: Any, path: str, problems: list[str]) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_ENUM:
        return _enum(field, value, path, problems)
    if kind == FieldDescriptor.TYPE_STRING:
        if isinstance(value, str):
            return value
        problems.append(f"{path}: must be a string")
    elif kind == FieldDescriptor.TYPE_BOOL:
        if isinstance(value, bool):
            return value
        problems.append(f"{path}: must be true or false")
    elif kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        problems.append(f"{path}: must be a number")
    elif kind == FieldDescriptor.TYPE_INT32:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**31 - 1:
            return value
        problems.append(f"{path}: must be a whole number (32-bit)")
    elif kind == FieldDescriptor.TYPE_INT64:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
            return value
        if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value):
            return int(value)
        problems.append(f"{path}: must be a whole number")
    else:
        return value
    return None


def _enum(field: Field, value: Any, path: str, problems: list[str]) -> int | None:
    enum = field.enum_type
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    known = [v for v in enum.values if v.number != 0]
    for v in known:
        friendly = v.name.removeprefix(prefix).lower()
        if (isinstance(value, int) and not isinstance(value, bool) and value == v.number) or (
            isinstance(value, str) and value.lower() in (v.name.lower(), friendly)
        ):
            return int(v.number)
    problems.append(f"{path}: must be one of {', '.join(v.name.removeprefix(prefix).lower() for v in known)}")
    return None


def _timestamp(value: Any, path: str, problems: list[str]) -> Timestamp | None:
    stamp = Timestamp()
    try:
        if isinstance(value, Timestamp):
            return value
        if isinstance(value, datetime):
            stamp.FromDatetime(value if value.tzinfo else value.replace(tzinfo=timezone.utc))
            return stamp
        if isinstance(value, str) and RFC3339.match(value):
            stamp.FromJsonString(value.replace(" ", "T").replace("t", "T").replace("z", "Z"))
            return stamp
        if isinstance(value, Mapping) and "seconds" in value:
            stamp.seconds = int(value["seconds"])
            stamp.nanos = int(value.get("nanos", 0))
            return stamp
    except (ValueError, TypeError, OverflowError):
        pass
    problems.append(f'{path}: must be a datetime, an RFC 3339 time ("2026-07-24T09:00:00Z") or a Timestamp')
    return None


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()

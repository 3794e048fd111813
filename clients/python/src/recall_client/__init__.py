"""recall_client: the Python client of the recall sidecar.

    from recall_client import RecallClient

    with RecallClient("127.0.0.1:50051", tenant_id="acme", principal_id="andy") as recall:
        session = recall.open_session(scope="veetbot")        # snapshot: the cached prompt prefix
        turn = session.recall_for_turn("t-1", "which editor does Andy use")
        print(turn.rendered)                                     # goes into the user turn

See clients/python/README.md. ``recall_client.testing`` starts a real local sidecar for tests.
"""

from recall_client.aio import AsyncRecallClient, AsyncSession
from recall_client.client import RecallClient, Session
from recall_client.errors import RecallError
from recall_client.identity import Tls
from recall_client.requests import SessionRef, Surface, WorkingState
from recall_client.results import (
    ArmCandidate,
    ArmEvent,
    Correction,
    EpisodeScope,
    Episode,
    EpisodesPage,
    Erasure,
    RecallResult,
    RecalledBelief,
    Rejection,
    SearchResult,
    Trace,
    TurnRecall,
)
from recall_client.retry import DEFAULT_RETRY, RetryPolicy
from recall_client.writes import (
    BELIEF_DEFAULTS,
    Appended,
    Authority,
    BeliefStatus,
    Portability,
    Replaced,
    ScopeLevel,
    Sensitivity,
    Written,
    WrittenMany,
    cited_ids,
)

__version__ = "0.1.0"

__all__ = [
    "Appended",
    "Authority",
    "BELIEF_DEFAULTS",
    "BeliefStatus",
    "Portability",
    "Replaced",
    "ScopeLevel",
    "Sensitivity",
    "Written",
    "WrittenMany",
    "cited_ids",
    "ArmCandidate",
    "ArmEvent",
    "AsyncRecallClient",
    "AsyncSession",
    "Correction",
    "DEFAULT_RETRY",
    "Episode",
    "EpisodeScope",
    "EpisodesPage",
    "Erasure",
    "RecallClient",
    "RecallError",
    "RecallResult",
    "RecalledBelief",
    "Rejection",
    "RetryPolicy",
    "SearchResult",
    "Session",
    "SessionRef",
    "Surface",
    "Tls",
    "Trace",
    "TurnRecall",
    "WorkingState",
]

"""Calling the recall sidecar from Python with grpcio.

Generate the modules first (examples/python/generate.sh), then:

    python3 examples/python/recall_example.py [127.0.0.1:50051 | unix:///run/recall/recall.sock]

Writes one belief, opens a session with a snapshot, recalls in a turn with the
snapshot's watermark (as an agent runtime does), prints the block, and exits 1
when the belief is not in it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"))

import grpc  # noqa: E402
from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402
from memory.v1 import memory_service_pb2 as m  # noqa: E402
from memory.v1 import memory_service_pb2_grpc as memory_svc  # noqa: E402
from memory.v1 import types_pb2 as t  # noqa: E402
from memory.v1 import write_service_pb2 as w  # noqa: E402
from memory.v1 import write_service_pb2_grpc as write_svc  # noqa: E402

STATEMENT = "Andy's editor is Helix."


def main(target: str) -> int:
    channel = grpc.insecure_channel(target)
    memory = memory_svc.MemoryServiceStub(channel)
    write = write_svc.MemoryWriteServiceStub(channel)
    # Every call carries the caller's identity as metadata.
    md = (("x-tenant-id", "example-tenant"), ("x-principal-id", "andy"))

    now = Timestamp()
    now.GetCurrentTime()
    belief = t.Belief(
        belief_id="8f21a0c3-0000-4000-8000-000000000002",
        subject="Andy",
        statement=STATEMENT,
        belief_type="preference",
        status=t.BELIEF_STATUS_ACTIVE,
        confidence=0.9,
        authority=t.AUTHORITY_USER,
        origin_scope="veetbot",
        scope_level=t.SCOPE_LEVEL_USER,
        portability=t.PORTABILITY_PORTABLE,
        valid_from=now,
        recorded_at=now,
        last_evidence_at=now,
        evidence_count=1,
    )
    write.PutBeliefs(w.PutBeliefsRequest(beliefs=[belief]), metadata=md, timeout=5)

    # Session open: the snapshot goes into the cached prompt prefix; keep its watermark.
    watermark = 0
    snapshot = m.RecallRequest(moment=t.MOMENT_SNAPSHOT, session_id="example-session",
                               query=t.RecallQuery(current_scope="veetbot"))
    for event in memory.Recall(snapshot, metadata=md, timeout=5):
        if event.HasField("result"):
            watermark = event.result.snapshot_watermark

    # A turn: the block goes into the user turn; the last event is the result.
    request = m.RecallRequest(moment=t.MOMENT_IN_TURN, session_id="example-session", turn_id="t-1",
                              snapshot_watermark=watermark,
                              query=t.RecallQuery(current_scope="veetbot", text="which editor does Andy use",
                                                  subjects=["Andy"]))
    for event in memory.Recall(request, metadata=md, timeout=5):
        if event.HasField("arm"):
            print(f"arm {event.arm.arm}: {event.arm.latency_ms} ms", file=sys.stderr)
        elif event.HasField("result"):
            print(event.result.rendered, end="")
            print(f"trace {event.result.trace_id}", file=sys.stderr)
            return 0 if STATEMENT in event.result.rendered else 1
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"))

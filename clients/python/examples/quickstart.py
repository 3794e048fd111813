"""recall_client in 20 lines: a test sidecar, a session, a turn, cite, reject, search, erase."""
from recall_client.testing import Fixture, local_sidecar

HELIX = {"belief_id": "8f21a0c3-0000-4000-8000-000000000001", "subject": "Andy", "statement": "Andy's editor is Helix.",
         "belief_type": "preference", "status": "BELIEF_STATUS_ACTIVE", "confidence": 0.9, "authority": "AUTHORITY_USER",
         "origin_scope": "veetbot", "scope_level": "SCOPE_LEVEL_USER", "portability": "PORTABILITY_PORTABLE"}

with local_sidecar([Fixture("acme", "andy", records=[{"belief": HELIX}])]) as sidecar, sidecar.client() as recall:
    session = recall.open_session(scope="veetbot")      # the snapshot, for the cached system prompt
    print(session.snapshot.rendered)
    turn = session.recall_for_turn("turn-1", "which editor does Andy use?", subjects=["Andy"])  # carries session.watermark
    print(turn.rendered)                                  # for the user turn
    recall.cite(turn.trace_id, [item.belief_id for item in turn.result.items])  # what the model used
    recall.reject(turn.result.items[0].belief_id, "not_true")  # the user says it is wrong
    assert recall.search("Andy's editor").result.items == ()
    print(recall.erase_principal().deleted)               # everything Andy's, gone

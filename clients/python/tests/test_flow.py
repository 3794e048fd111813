"""The blocking client's call flow against a real sidecar: session, turn, cite, reject, search, episodes, trace, erase."""

from __future__ import annotations

import pytest

from memories import CONCISE, EPISODE, EPISODE_SESSION, HELIX, VIM, belief
from recall_client import ArmEvent, RecallClient, RecallError
from recall_client.proto import inspect_service_pb2, memory_service_pb2, write_service_pb2
from recall_client.requests import belief as to_belief
from recall_client.testing import LocalSidecar


def supersede_vim(client: RecallClient) -> None:
    """Andy's editor changes after the snapshot: Vim superseded by Helix (through the raw stub)."""
    client.write.PutBeliefs(
        write_service_pb2.PutBeliefsRequest(
            beliefs=[
                to_belief(belief(VIM, "Andy's editor is Vim.", status="BELIEF_STATUS_SUPERSEDED")),
                to_belief(belief(HELIX, "Andy's editor is Helix.", supersedes=[VIM])),
            ]
        ),
        timeout=5,
    )


def test_a_session_carries_its_snapshot_and_watermark(andy: RecallClient) -> None:
    session = andy.open_session("s-1", scope="veetbot", goal="write the release notes")
    assert "[m:8f21a0c3]" in session.snapshot.rendered
    assert sorted(i.belief_id for i in session.snapshot.items) == sorted([CONCISE, VIM])
    assert session.watermark == session.snapshot.snapshot_watermark > 0
    assert (session.session_id, session.scope) == ("s-1", "veetbot")
    # The same session's snapshot again: the sidecar's cache, the same bytes.
    again = andy.open_session("s-1", scope="veetbot", goal="write the release notes")
    assert again.snapshot.from_cache and again.snapshot.rendered == session.snapshot.rendered


def test_a_turn_gets_the_delta_after_the_watermark_with_corrections_first(andy: RecallClient) -> None:
    session = andy.open_session("s-2", scope="veetbot")
    supersede_vim(andy)
    arms: list[ArmEvent] = []
    turn = session.recall_for_turn("t-1", "which editor does Andy use?", subjects=["Andy"], on_arm=arms.append)
    assert turn.rendered.startswith("correction: [m:9d02b117000040008000000000000002] no longer holds")  # VIM and HELIX share 31 digits
    assert [c.belief_id for c in turn.result.corrections] == [VIM]
    assert HELIX in [i.belief_id for i in turn.result.items]
    assert not turn.degraded and turn.arms_degraded == ()
    assert "delta" in [a.arm for a in arms] and all(not a.degraded for a in arms)
    assert turn.trace_id == turn.result.trace_id


def test_cite_records_once_and_the_trace_says_so(andy: RecallClient) -> None:
    session = andy.open_session("s-3", scope="veetbot")
    turn = session.recall_for_turn("t-cite", "concise writing", subjects=["Andy"])
    assert andy.cite(turn.trace_id, [CONCISE]) == 1
    assert andy.cite(turn.trace_id, [CONCISE]) == 0
    trace = andy.get_trace(turn.trace_id).trace
    assert trace is not None and list(trace.cited) == [CONCISE] and trace.turn_id == "t-cite"
    # From the snapshot, a turn names itself.
    assert andy.cite(session.snapshot.trace_id, [VIM], turn_id="t-cite") == 1
    view = andy.get_trace(turn_id="t-cite").view
    assert view is not None and {b.belief_id for b in view.beliefs if b.used} == {CONCISE, VIM}


def test_the_four_rejection_kinds(andy: RecallClient) -> None:
    flagged = andy.reject(CONCISE, "unspecified", reason="not sure")
    not_here = andy.reject(CONCISE, "not_here", scope="billing")
    assert not_here.store_position > flagged.store_position
    changed = andy.reject(VIM, "changed", correction=belief(HELIX, "Andy's editor is Helix."))
    assert [i.belief_id for i in andy.search("Andy's editor").result.items] == [HELIX]
    not_true = andy.reject(HELIX, "not_true")
    assert not_true.store_position > changed.store_position
    assert andy.search("Andy's editor").result.items == ()
    # The same rejection id again is a no-op.
    assert andy.reject(HELIX, "not_true", rejection_id=not_true.rejection_id).store_position == not_true.store_position
    with pytest.raises(RecallError) as missing:
        andy.reject(CONCISE, "changed")
    assert missing.value.status == "INVALID_ARGUMENT" and missing.value.message.startswith("correction")


def test_search_and_the_episode_log(andy: RecallClient) -> None:
    found = andy.search("concise writing", subjects=["Andy"])
    assert found.result.items[0].belief_id == CONCISE
    assert found.result.items[0].authority == "user" and found.result.items[0].confidence_band == "high"
    assert found.scope_source == "none"
    page = andy.recall_episodes(EPISODE_SESSION)
    assert [e.episode_id for e in page.episodes] == [EPISODE]
    assert page.episodes[0].content == "I switched to Vim last year." and page.next_page_token == ""
    assert "[e:e1000000]" in page.rendered


def test_erase_principal_leaves_the_other_principal(andy: RecallClient, bea: RecallClient) -> None:
    erased = andy.erase_principal()
    assert erased.deleted["beliefs"] == 2 and erased.deleted["episodes"] == 1
    assert andy.open_session(scope="veetbot").snapshot.items == ()
    assert [i.statement for i in bea.open_session(scope="veetbot").snapshot.items] == ["Bea works from Berlin."]


def test_errors_carry_status_method_attempts_and_the_servers_message(andy: RecallClient) -> None:
    with pytest.raises(RecallError) as bad:
        andy.cite("not-a-uuid", [CONCISE])
    e = bad.value
    assert (e.status, e.method, e.attempts) == ("INVALID_ARGUMENT", "MemoryWriteService.RecordCitations", 1)
    assert e.message.startswith("trace_id: ")
    with pytest.raises(RecallError) as missing:
        andy.get_trace("00000000-0000-4000-8000-000000000000")
    assert missing.value.status == "NOT_FOUND"
    with pytest.raises(RecallError) as kind:
        andy.reject(CONCISE, "wrong")  # type: ignore[arg-type]
    assert (kind.value.status, kind.value.attempts) == ("INVALID_ARGUMENT", 0) and kind.value.message.startswith("kind: ")


def test_raw_stubs_carry_the_identity(andy: RecallClient) -> None:
    response = andy.memory.Search(memory_service_pb2.SearchRequest(text="concise writing"), timeout=5)
    assert response.result.items[0].belief_id == CONCISE
    listed = andy.inspect.ListBeliefs(inspect_service_pb2.ListBeliefsRequest(), timeout=5)
    assert sorted(b.belief.belief_id for b in listed.beliefs) == sorted([CONCISE, VIM])


def test_the_unix_socket_with_trusted_headers(sidecar: LocalSidecar) -> None:
    assert sidecar.socket_path is not None
    with RecallClient(f"unix://{sidecar.socket_path}", tenant_id="acme", principal_id="andy") as client:
        assert client.search("concise writing").result.items[0].belief_id == CONCISE


def test_an_identity_is_required() -> None:
    with pytest.raises(ValueError, match="tenant_id and principal_id are required"):
        RecallClient("127.0.0.1:1")

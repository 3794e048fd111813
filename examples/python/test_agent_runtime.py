"""An agent runtime's memory, tested against a real recall sidecar.

`answer_turn` stands for your runtime: it opens a session once (the snapshot goes into the cached
system prompt), recalls for every turn (the block goes into the user turn), and cites what the
model used. Replace it with your own and keep the tests: they check what your runtime sends.
"""

from __future__ import annotations

from recall_client import RecallClient, Session
from recall_client.testing import LocalSidecar

VIM = "9d02b117-0000-4000-8000-000000000002"


def answer_turn(recall: RecallClient, session: Session, turn_id: str, user_message: str) -> str:
    """Your runtime's turn: the prompt it would send to the model."""
    turn = session.recall_for_turn(turn_id, user_message, subjects=["Andy"])
    prompt = f"{session.snapshot.rendered}\n{turn.rendered}\nUser: {user_message}"
    recall.cite(turn.trace_id, [item.belief_id for item in turn.result.items])
    return prompt


def test_the_prompt_carries_what_andy_told_us(recall_sidecar: LocalSidecar) -> None:
    recall = recall_sidecar.client()
    session = recall.open_session(scope="veetbot")
    prompt = answer_turn(recall, session, "t-1", "Which editor should the setup guide assume?")
    assert "Andy's editor is Vim." in prompt
    assert "Andy prefers concise answers." in prompt


def test_a_rejected_memory_never_comes_back(recall_sidecar: LocalSidecar) -> None:
    recall = recall_sidecar.client()
    session = recall.open_session(scope="veetbot")
    recall.reject(VIM, "not_true", reason="Andy moved to Helix")
    prompt = answer_turn(recall, session, "t-2", "Which editor should the setup guide assume?")
    assert "correction: [m:9d02b117] no longer holds" in prompt


def test_each_test_starts_from_the_fixtures(recall_sidecar: LocalSidecar) -> None:
    # The rejection of the test before was reset away.
    session = recall_sidecar.client().open_session(scope="veetbot")
    assert "Andy's editor is Vim." in session.snapshot.rendered

"""A recall whose arm misses the deadline: a partial, degraded answer, not an error."""

from __future__ import annotations

from memories import ANDY, CONCISE
from recall_client import ArmEvent, RecallError, SessionRef
from recall_client.testing import Fixture, local_sidecar


def test_an_arm_abandoned_at_the_deadline_degrades_the_turn() -> None:
    # The lexical arm starts 6 s late, far past the 3 s deadline, whose margin leaves a loaded machine room to answer.
    with local_sidecar([Fixture("acme", "andy", records=ANDY)], env={"RECALL_FAULT_ARM_DELAY": "lexical=6000"}) as slow:
        client = slow.client()
        # A first recall warms the sidecar up: the first of a new process can spend the deadline's
        # margin on its cold start and miss the deadline (DEADLINE_EXCEEDED) instead of degrading.
        try:
            client.recall_for_turn(SessionRef("s-warm", "veetbot", 0), "t-warm", "warm up", timeout=3)
        except RecallError as error:
            assert error.status == "DEADLINE_EXCEEDED"
        arms: list[ArmEvent] = []
        turn = client.recall_for_turn(
            SessionRef("s-slow", "veetbot", 0), "t", "concise writing", subjects=["Andy"], on_arm=arms.append, timeout=3
        )
        assert turn.degraded and turn.arms_degraded == ("lexical",)
        assert CONCISE in [i.belief_id for i in turn.result.items]  # from the arms that finished
        assert [a.arm for a in arms if a.degraded] == ["lexical"]

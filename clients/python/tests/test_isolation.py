"""Two principals of one tenant on one sidecar: neither ever sees the other's memory."""

from __future__ import annotations

import pytest

from memories import BERLIN, CONCISE, EPISODE_SESSION
from recall_client import RecallClient, RecallError


def test_a_principal_sees_only_its_own_memory(andy: RecallClient, bea: RecallClient) -> None:
    andy_session = andy.open_session("s-andy", scope="veetbot")
    andy_turn = andy_session.recall_for_turn("t-andy", "concise writing", subjects=["Andy"])
    bea_session = bea.open_session("s-bea", scope="veetbot")
    assert [i.belief_id for i in bea_session.snapshot.items] == [BERLIN]
    bea_turn = bea_session.recall_for_turn("t-bea", "concise writing editor Vim", subjects=["Andy"])
    assert CONCISE not in [i.belief_id for i in bea_turn.result.items]
    assert bea.search("concise writing", subjects=["Andy"]).result.items == ()
    assert bea.recall_episodes(EPISODE_SESSION).episodes == ()
    for call in (lambda: bea.get_trace(andy_turn.trace_id), lambda: bea.cite(andy_turn.trace_id, [CONCISE])):
        with pytest.raises(RecallError) as error:
            call()
        assert error.value.status == "NOT_FOUND"
    with pytest.raises(RecallError) as other:
        bea.erase_principal(tenant_id="acme", principal_id="andy")
    assert other.value.status == "PERMISSION_DENIED"
    assert andy.search("concise writing").result.items[0].belief_id == CONCISE

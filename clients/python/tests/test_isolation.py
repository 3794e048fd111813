"""Two principals of one tenant on one sidecar: neither ever sees the other's memory."""

from __future__ import annotations

import pytest

from memories import BERLIN, CONCISE, EPISODE_SESSION
from recall_client import RecallClient, RecallError
from recall_client.testing import LocalSidecar


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


def test_a_principal_with_no_memory_says_so(sidecar: LocalSidecar, andy: RecallClient) -> None:
    # The wrong tenant (the README's "acme" against the demo's "demo-tenant"): an empty block that says why.
    with sidecar.client("demo-tenant", "andy") as stranger:
        result = stranger.search("which editor does Andy use?").result
        assert result.no_memory is True
        assert result.items == ()
        assert result.as_of is None
        assert "1970" not in result.rendered
    assert andy.search("which editor does Andy use?").result.no_memory is False

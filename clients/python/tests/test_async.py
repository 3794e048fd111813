"""The asyncio client (grpc.aio): the same flow against the same real sidecar."""

from __future__ import annotations

import asyncio

import pytest

from memories import CONCISE, EPISODE, EPISODE_SESSION, HELIX, VIM, belief
from recall_client import ArmEvent, RecallError
from recall_client.testing import LocalSidecar


def test_the_async_flow(sidecar: LocalSidecar) -> None:
    async def run() -> None:
        async with sidecar.async_client() as andy:
            session = await andy.open_session("s-async", scope="veetbot")
            assert sorted(i.belief_id for i in session.snapshot.items) == sorted([CONCISE, VIM])
            await andy.reject(VIM, "changed", correction=belief(HELIX, "Andy's editor is Helix."))
            arms: list[ArmEvent] = []
            turn = await session.recall_for_turn("t-async", "which editor does Andy use?", subjects=["Andy"], on_arm=arms.append)
            assert turn.rendered.startswith("correction: [m:9d02b117000040008000000000000002] no longer holds")  # VIM and HELIX share 31 digits
            assert HELIX in [i.belief_id for i in turn.result.items] and not turn.degraded
            assert "delta" in [a.arm for a in arms]
            assert await andy.cite(turn.trace_id, [HELIX]) == 1
            trace = await andy.get_trace(turn.trace_id)
            assert trace.trace is not None and list(trace.trace.cited) == [HELIX]
            assert (await andy.search("concise writing")).result.items[0].belief_id == CONCISE
            assert [e.episode_id for e in (await andy.recall_episodes(EPISODE_SESSION)).episodes] == [EPISODE]
            with pytest.raises(RecallError) as bad:
                await andy.cite("not-a-uuid", [CONCISE])
            assert (bad.value.status, bad.value.method, bad.value.attempts) == ("INVALID_ARGUMENT", "MemoryWriteService.RecordCitations", 1)
            erased = await andy.erase_principal()
            assert erased.deleted["beliefs"] == 3
            assert (await andy.open_session(scope="veetbot")).snapshot.items == ()

    try:
        asyncio.run(run())
    finally:
        sidecar.reset()


def test_concurrent_turns_on_one_async_client(sidecar: LocalSidecar) -> None:
    async def run() -> list[str]:
        async with sidecar.async_client() as andy:
            session = await andy.open_session("s-many", scope="veetbot")
            turns = await asyncio.gather(*(session.recall_for_turn(f"t-{n}", "concise writing", subjects=["Andy"]) for n in range(8)))
            return [t.trace_id for t in turns]

    assert len(set(asyncio.run(run()))) == 8

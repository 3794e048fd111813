"""The write helpers against a real sidecar: remember, replace, retract, mark_conflict, episodes, batches."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_client import BELIEF_DEFAULTS, RecallClient, RecallError, cited_ids
from recall_client._gen.memory.v1 import inspect_service_pb2 as i
from recall_client._gen.memory.v1 import types_pb2 as t
from recall_client.testing import LocalSidecar

UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "getting_memories_in.py"
#: The snake_case shape of the fixtures and import files.
HELIX_JSON = {
    "belief_id": "8f21a0c3-0000-4000-8000-0000000000aa",
    "subject": "Andy",
    "statement": "Andy's editor is Helix.",
    "belief_type": "preference",
    "status": "BELIEF_STATUS_ACTIVE",
    "confidence": 0.9,
    "authority": "AUTHORITY_USER",
    "origin_scope": "veetbot",
    "scope_level": "SCOPE_LEVEL_USER",
    "portability": "PORTABILITY_PORTABLE",
    "recorded_at": "2026-01-01T00:00:00Z",
}


@pytest.fixture
def writer(sidecar: LocalSidecar) -> Iterator[RecallClient]:
    """A principal of its own, working in veetbot; the sidecar is reset after the test."""
    yield sidecar.client("acme", "writer", scope="veetbot")
    sidecar.reset()


def rendered(client: RecallClient, text: str) -> str:
    return client.search(text, subjects=["Andy"]).result.rendered


def stored(client: RecallClient, belief_id: str) -> t.Belief:
    request = i.GetBeliefRequest(belief_id=belief_id, viewing_surface=t.Surface(sensitivity_ceiling=t.SENSITIVITY_RESTRICTED))
    return client.inspect.GetBelief(request).belief.belief


def test_remember_uses_the_documented_defaults_and_a_uuid_v4(writer: RecallClient) -> None:
    written = writer.remember("Andy", "Andy prefers concise answers.")
    assert UUID_V4.match(written.belief_id) and written.written == 1 and written.warnings == ()
    b = stored(writer, written.belief_id)
    assert (b.belief_type, b.status, b.confidence, b.authority) == ("preference", t.BELIEF_STATUS_ACTIVE, 0.9, t.AUTHORITY_USER)
    assert (b.origin_scope, b.scope_level, b.portability, b.sensitivity) == ("veetbot", t.SCOPE_LEVEL_USER, t.PORTABILITY_PORTABLE, t.SENSITIVITY_PERSONAL)
    assert BELIEF_DEFAULTS["status"] == "active"
    assert f"[m:{written.belief_id[:8]}] Andy prefers concise answers.  (user-stated, high)" in rendered(writer, "concise answers")


def test_replace_supersedes_and_the_turn_gets_the_correction(writer: RecallClient) -> None:
    vim = writer.remember("Andy", "Andy's editor is Vim.", belief_type="user_model_attr", predicate_key="editor")
    session = writer.open_session(scope="veetbot")
    helix = writer.replace(vim.belief_id, "Andy's editor is Helix.")
    assert helix.replaced == vim.belief_id
    b = stored(writer, helix.belief_id)
    assert (b.subject, b.belief_type, b.predicate_key, list(b.supersedes)) == ("Andy", "user_model_attr", "editor", [vim.belief_id])
    turn = session.recall_for_turn("t-1", "which editor does Andy use?")
    assert turn.rendered.startswith(f"correction: [m:{vim.belief_id[:8]}] no longer holds")
    assert [i.belief_id for i in turn.result.items] == [helix.belief_id]
    with pytest.raises(RecallError) as missing:
        writer.replace("00000000-0000-4000-8000-000000000000", "x")
    assert missing.value.status == "NOT_FOUND"


def test_retract_and_mark_conflict(writer: RecallClient) -> None:
    tea = writer.remember("Andy", "Andy drinks green tea every morning.")
    assert writer.retract(tea.belief_id).written == 1
    assert "green tea" not in rendered(writer, "green tea")
    assert writer.retract(tea.belief_id).written == 0
    fly = writer.remember("veetbot", "veetbot deploys to Fly.io.", belief_type="project_fact", authority="inferred", confidence=0.6)
    k8s = writer.remember("veetbot", "veetbot deploys to Kubernetes.", belief_type="project_fact", authority="inferred", confidence=0.6)
    assert writer.mark_conflict(fly.belief_id, k8s.belief_id).written == 1
    assert writer.mark_conflict(fly.belief_id, k8s.belief_id).written == 0
    block = writer.search("where does veetbot deploy", subjects=["veetbot"]).result.rendered
    assert f"conflicts=[m:{k8s.belief_id[:8]}]" in block and f"conflicts=[m:{fly.belief_id[:8]}]" in block


def test_episodes_keep_their_order_and_a_repeat_appends_nothing(writer: RecallClient) -> None:
    turn = [{"session_id": "s-1", "actor": "user", "content": "I moved to Lisbon."}, {"sessionId": "s-1", "actor": "agent", "content": "Noted."}]
    appended = writer.append_episodes(turn)
    assert appended.appended == 2 and all(UUID_V4.match(i) for i in appended.episode_ids)
    page = writer.recall_episodes("s-1")
    assert [e.episode_id for e in page.episodes] == list(appended.episode_ids)
    again = writer.append_episodes([{**e, "episode_id": eid} for e, eid in zip(turn, appended.episode_ids)])
    assert again.appended == 0


def test_a_batch_in_the_fixture_shape_and_every_bad_field_in_one_error(writer: RecallClient) -> None:
    many = writer.remember_many([HELIX_JSON, {"subject": "Andy", "statement": "Andy keeps European hours.", "scopeLevel": "project"}])
    assert many.belief_ids[0] == HELIX_JSON["belief_id"] and many.written == 2
    assert stored(writer, many.belief_ids[1]).scope_level == t.SCOPE_LEVEL_PROJECT
    with pytest.raises(RecallError) as encoded:
        writer.remember_many([{**HELIX_JSON, "status": "activ", "confidence": "high", "colour": "blue"}])
    assert (encoded.value.status, encoded.value.attempts) == ("INVALID_ARGUMENT", 0)
    assert encoded.value.message == (
        "beliefs[0].status: must be one of active, provisional, superseded, expired; "
        "beliefs[0].confidence: must be a number; beliefs[0].colour: is not a field of Belief"
    )
    with pytest.raises(RecallError) as checked:
        writer.remember_many([{"subject": "Andy", "statement": "Andy likes rain."}, {"belief_id": "x", "subject": " ", "statement": "", "confidence": 2}])
    assert checked.value.status == "INVALID_ARGUMENT"
    assert checked.value.message == (
        "beliefs[1].belief_id: must be a UUID; beliefs[1].subject: is required; beliefs[1].statement: is required; "
        "beliefs[1].confidence: must be between 0 and 1"
    )
    assert "rain" not in rendered(writer, "rain")  # nothing of the batch was written


def test_ids_sharing_eight_digits_warn_render_longer_and_still_cite(writer: RecallClient) -> None:
    cat = writer.remember("Andy", "Andy's cat is called Miso.", belief_id="aaaaaaaa-0000-4000-8000-000000000001")
    dog = writer.remember("Andy", "Andy's dog is called Pico.", belief_id="aaaaaaaa-b000-4000-8000-000000000002")
    assert dog.warnings and dog.warnings[0].startswith("beliefs[0].belief_id: shares its first eight hex digits (aaaaaaaa)")
    found = writer.search("what are Andy's cat and dog called").result
    assert "[m:aaaaaaaa0] Andy's cat" in found.rendered and "[m:aaaaaaaab] Andy's dog" in found.rendered
    ids = [item.belief_id for item in found.items]
    assert cited_ids("Your dog is Pico [m:aaaaaaaab], your cat Miso [m:aaaaaaaa0].", ids) == [dog.belief_id, cat.belief_id]
    assert writer.cite(found.trace_id, ["m:aaaaaaaab"]) == 1


def test_the_async_helpers(sidecar: LocalSidecar) -> None:
    async def run() -> None:
        async with sidecar.async_client("acme", "writer-async", scope="veetbot") as memory:
            vim = await memory.remember("Andy", "Andy's editor is Vim.")
            helix = await memory.replace(vim.belief_id, "Andy's editor is Helix.")
            found = await memory.search("which editor does Andy use", subjects=["Andy"])
            assert [i.belief_id for i in found.result.items] == [helix.belief_id]
            assert (await memory.retract(helix.belief_id)).written == 1
            appended = await memory.append_episodes([{"session_id": "s-a", "content": "hello"}])
            assert appended.appended == 1
            with pytest.raises(RecallError) as bad:
                await memory.remember("Andy", "x", status="activ")
            assert bad.value.message == "beliefs[0].status: must be one of active, provisional, superseded, expired"

    try:
        asyncio.run(run())
    finally:
        sidecar.reset()


def test_the_readme_example_writes_replaces_and_recalls_the_correction() -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"correction: \[m:[0-9a-f]{8}\] no longer holds as of .*; superseded by \[m:[0-9a-f]{8}\]\.", run.stdout)
    assert "Andy's editor is Helix.  (user-stated, high)" in run.stdout

"""recall_client.testing: fixtures in the `recall import` format, reset(), stop(), and a bad fixture's message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories import BERLIN, CONCISE, belief
from recall_client.proto import write_service_pb2
from recall_client.requests import belief as to_belief
from recall_client.testing import Fixture, SidecarError, local_sidecar, recall_command, start_local_sidecar


def test_fixtures_from_a_file_text_and_records_reset_and_stop(tmp_path: Path) -> None:
    file = tmp_path / "andy.jsonl"
    file.write_text(json.dumps({"belief": belief(CONCISE, "Andy prefers concise writing.")}) + "\n")
    helix = "9d02b117-0000-4000-8000-000000000003"
    fixtures = [
        Fixture("acme", "andy", file=file, jsonl=json.dumps({"belief": belief(helix, "Andy's editor is Helix.")})),
        Fixture("acme", "bea", records=[{"belief": belief(BERLIN, "Bea works from Berlin.", subject="Bea")}]),
    ]
    sidecar = start_local_sidecar(fixtures)
    try:
        andy = sidecar.client()
        first = andy.open_session("s-reset", scope="veetbot")
        assert sorted(i.belief_id for i in first.snapshot.items) == sorted([CONCISE, helix])
        assert andy.open_session("s-reset", scope="veetbot").snapshot.from_cache
        andy.reject(helix, "not_true")
        stranger = sidecar.client("other", "zed")
        stranger.write.PutBeliefs(write_service_pb2.PutBeliefsRequest(beliefs=[to_belief(belief(BERLIN, "Zed lives in Oslo.", subject="Zed"))]), timeout=5)

        sidecar.reset()

        again = andy.open_session("s-reset", scope="veetbot")
        assert not again.snapshot.from_cache and again.watermark > first.watermark
        assert sorted(i.belief_id for i in again.snapshot.items) == sorted([CONCISE, helix])
        assert stranger.search("Oslo").result.items == ()
        assert [i.belief_id for i in sidecar.client("acme", "bea").search("Berlin").result.items] == [BERLIN]
    finally:
        assert sidecar.stop() == 0


def test_a_bad_fixture_fails_the_start_naming_the_line_and_field(tmp_path: Path) -> None:
    file = tmp_path / "bad.jsonl"
    file.write_text(json.dumps({"belief": belief(CONCISE, "fine")}) + "\n" + json.dumps({"belief": belief(BERLIN, "x", confidence=7)}) + "\n")
    with pytest.raises(SidecarError, match=r"fixtures\[0\] line 2: belief\.confidence: must be between 0 and 1"):
        start_local_sidecar([Fixture("t", "p", file=file)])
    with pytest.raises(SidecarError, match=r"fixtures\[0\] line 1: "):
        start_local_sidecar([Fixture("t", "p", jsonl="{not json")])


def test_the_recall_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_BIN", "/opt/recall/dist/cli/main.js")
    assert recall_command() == ["node", "/opt/recall/dist/cli/main.js"]
    monkeypatch.setenv("RECALL_BIN", "/usr/local/bin/recall")
    assert recall_command() == ["/usr/local/bin/recall"]


def test_the_installed_npm_package_is_found_in_a_parent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RECALL_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    nested = tmp_path / "app" / "tests"
    nested.mkdir(parents=True)
    with pytest.raises(SidecarError) as raised:
        recall_command(nested)
    # One error, saying each way to provide the sidecar.
    assert "npm install @recall-memory/sidecar" in str(raised.value)
    assert "RECALL_BIN" in str(raised.value) and "PATH" in str(raised.value)
    bin_dir = tmp_path / "app" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "recall").write_text("#!/bin/sh\n")
    assert recall_command(nested) == [str(bin_dir / "recall")]


def test_a_built_checkout_is_found_in_a_parent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RECALL_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    nested = tmp_path / "clone" / "clients" / "python"
    nested.mkdir(parents=True)
    (tmp_path / "clone" / "package.json").write_text('{"name": "@recall-memory/sidecar"}')
    with pytest.raises(SidecarError):
        recall_command(nested)  # not built yet
    bin_file = tmp_path / "clone" / "dist" / "cli" / "main.js"
    bin_file.parent.mkdir(parents=True)
    bin_file.write_text("")
    assert recall_command(nested) == ["node", str(bin_file)]
    (tmp_path / "clone" / "package.json").write_text('{"name": "another-package"}')
    with pytest.raises(SidecarError):
        recall_command(nested)


def test_a_missing_command_says_so() -> None:
    with pytest.raises(SidecarError, match="cannot run /nonexistent/recall test-sidecar"):
        with local_sidecar(command=["/nonexistent/recall"]):
            pass

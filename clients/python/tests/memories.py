"""Fixture records for the suite, in the `recall import` format."""

from __future__ import annotations

from typing import Any

CONCISE = "8f21a0c3-0000-4000-8000-000000000001"
VIM = "9d02b117-0000-4000-8000-000000000002"
HELIX = "9d02b117-0000-4000-8000-000000000003"
BERLIN = "1c07b2d4-0000-4000-8000-000000000004"
EPISODE = "e1000000-0000-4000-8000-000000000001"
EPISODE_SESSION = "s-history"


def belief(belief_id: str, statement: str, subject: str = "Andy", **fields: Any) -> dict[str, Any]:
    """A belief in protobuf JSON, as a `recall import` line's "belief"."""
    return {
        "belief_id": belief_id,
        "subject": subject,
        "statement": statement,
        "belief_type": "preference",
        "status": "BELIEF_STATUS_ACTIVE",
        "confidence": 0.9,
        "authority": "AUTHORITY_USER",
        "origin_scope": "veetbot",
        "scope_level": "SCOPE_LEVEL_USER",
        "portability": "PORTABILITY_PORTABLE",
        **fields,
    }


ANDY = [
    {"belief": belief(CONCISE, "Andy prefers concise writing.")},
    {"belief": belief(VIM, "Andy's editor is Vim.")},
    {"episode": {"episode_id": EPISODE, "session_id": EPISODE_SESSION, "occurred_at": "2026-11-02T09:00:00Z", "actor": "user", "kind": "message", "content": "I switched to Vim last year."}},
]
BEA = [{"belief": belief(BERLIN, "Bea works from Berlin.", subject="Bea")}]

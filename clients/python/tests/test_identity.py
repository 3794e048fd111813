"""A JWT bearer token as call credentials, refreshed by a callable, verified by a real sidecar."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import jwt
import pytest

from memories import ANDY, BEA, BERLIN, CONCISE
from recall_client import AsyncRecallClient, RecallClient, RecallError
from recall_client.testing import Fixture, LocalSidecar, start_local_sidecar

SECRET = "a-test-secret-of-at-least-32-characters"
ISSUER = "https://issuer.test"
AUDIENCE = "recall"


def token(principal: str, tenant: str = "acme", expires_in: int = 300) -> str:
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": principal, "tenant_id": tenant, "exp": int(time.time()) + expires_in}
    return jwt.encode(claims, SECRET, algorithm="HS256")


@pytest.fixture(scope="module")
def jwt_sidecar() -> Iterator[LocalSidecar]:
    env = {"RECALL_IDENTITY": "jwt", "RECALL_JWT_SECRET": SECRET, "RECALL_JWT_ISSUER": ISSUER, "RECALL_JWT_AUDIENCE": AUDIENCE}
    sidecar = start_local_sidecar([Fixture("acme", "andy", records=ANDY), Fixture("acme", "bea", records=BEA)], env=env)
    try:
        yield sidecar
    finally:
        assert sidecar.stop() == 0


def test_the_token_source_is_asked_on_every_call(jwt_sidecar: LocalSidecar) -> None:
    asked: list[str] = []

    def fresh_token() -> str:
        asked.append("andy")
        return token("andy")

    with RecallClient(jwt_sidecar.address, token=fresh_token) as andy:
        session = andy.open_session(scope="veetbot")
        assert CONCISE in [i.belief_id for i in session.snapshot.items]
        assert [i.belief_id for i in andy.search("concise writing").result.items] == [CONCISE]
    assert len(asked) == 2


def test_the_token_decides_who_calls(jwt_sidecar: LocalSidecar) -> None:
    with RecallClient(jwt_sidecar.address, token=token("bea")) as bea:
        assert [i.belief_id for i in bea.open_session(scope="veetbot").snapshot.items] == [BERLIN]
        assert bea.search("concise writing", subjects=["Andy"]).result.items == ()
        # The erase confirmation needs the ids: a token alone does not give them to the client.
        with pytest.raises(RecallError) as unconfirmed:
            bea.erase_principal()
        assert (unconfirmed.value.status, unconfirmed.value.attempts) == ("INVALID_ARGUMENT", 0)


def test_headers_must_agree_with_the_token(jwt_sidecar: LocalSidecar) -> None:
    with RecallClient(jwt_sidecar.address, token=token("bea"), tenant_id="acme", principal_id="andy") as mixed:
        with pytest.raises(RecallError) as error:
            mixed.search("concise writing")
    assert error.value.status == "PERMISSION_DENIED"


def test_a_missing_or_expired_token_is_unauthenticated(jwt_sidecar: LocalSidecar) -> None:
    with RecallClient(jwt_sidecar.address, tenant_id="acme", principal_id="andy") as headers_only:
        with pytest.raises(RecallError) as missing:
            headers_only.search("concise writing")
    assert missing.value.status == "UNAUTHENTICATED" and "authorization" in missing.value.message
    with RecallClient(jwt_sidecar.address, token=token("andy", expires_in=-60)) as expired:
        with pytest.raises(RecallError) as error:
            expired.search("concise writing")
    assert (error.value.status, error.value.message) == ("UNAUTHENTICATED", "bearer token rejected: expired")


def test_a_failing_token_source_fails_the_call_not_the_client(jwt_sidecar: LocalSidecar) -> None:
    def broken() -> str:
        raise RuntimeError("token service down")

    with RecallClient(jwt_sidecar.address, token=broken, retry=__import__("recall_client").RetryPolicy(max_attempts=1)) as client:
        with pytest.raises(RecallError):
            client.search("concise writing")


def test_the_async_client_with_a_token(jwt_sidecar: LocalSidecar) -> None:
    async def run() -> list[str]:
        async with AsyncRecallClient(jwt_sidecar.address, token=lambda: token("andy"), tenant_id="acme", principal_id="andy") as andy:
            session = await andy.open_session(scope="veetbot")
            turn = await session.recall_for_turn("t-jwt", "concise writing", subjects=["Andy"])
            return [i.belief_id for i in turn.result.items]

    assert CONCISE in asyncio.run(run())

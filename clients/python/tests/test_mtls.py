"""mTLS channel credentials: the client certificate's SPIFFE ID names the principal (a throwaway PKI per run)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memories import ANDY, BEA, BERLIN, CONCISE
from recall_client import RecallClient, RecallError, Tls
from recall_client.testing import Fixture, LocalSidecar, start_local_sidecar

PATTERN = "spiffe://example.org/tenant/{tenant}/principal/{principal}"


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def new_ca(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}")
    return cert, key


def issue(folder: Path, ca: tuple[Path, Path], name: str, extensions: str) -> tuple[bytes, bytes]:
    key, csr, cert, ext = (folder / f"{name}.{suffix}" for suffix in ("key", "csr", "crt", "ext"))
    ext.write_text(extensions)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={name}")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial", "-out", str(cert), "-days", "1", "-extfile", str(ext))
    return cert.read_bytes(), key.read_bytes()


def client_cert(folder: Path, ca: tuple[Path, Path], principal: str) -> tuple[bytes, bytes]:
    uri = PATTERN.format(tenant="acme", principal=principal)
    return issue(folder, ca, f"client-{principal}-{ca[0].stem}", f"subjectAltName=URI:{uri}\nextendedKeyUsage=clientAuth\n")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pki")
    ca = new_ca(folder, "test-ca")
    cert, key = issue(folder, ca, "server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    (folder / "server.pem").write_bytes(cert)
    (folder / "server-key.pem").write_bytes(key)
    return folder


@pytest.fixture(scope="module")
def mtls_sidecar(pki: Path) -> Iterator[LocalSidecar]:
    env = {
        "RECALL_IDENTITY": "mtls",
        "RECALL_TLS_CERT_FILE": str(pki / "server.pem"),
        "RECALL_TLS_KEY_FILE": str(pki / "server-key.pem"),
        "RECALL_TLS_CLIENT_CA_FILE": str(pki / "test-ca.crt"),
        "RECALL_MTLS_SPIFFE_PATTERN": PATTERN,
    }
    sidecar = start_local_sidecar([Fixture("acme", "andy", records=ANDY), Fixture("acme", "bea", records=BEA)], env=env)
    try:
        yield sidecar
    finally:
        assert sidecar.stop() == 0


def tls_for(pki: Path, principal: str, ca_name: str = "test-ca") -> Tls:
    ca = (pki / f"{ca_name}.crt", pki / f"{ca_name}.key")
    if not ca[0].exists():
        new_ca(pki, ca_name)
    cert, key = client_cert(pki, ca, principal)
    return Tls(root_certificates=(pki / "test-ca.crt").read_bytes(), certificate_chain=cert, private_key=key)


def test_the_certificate_decides_who_calls(pki: Path, mtls_sidecar: LocalSidecar) -> None:
    with RecallClient(mtls_sidecar.address, tls=tls_for(pki, "andy")) as andy:
        assert andy.search("concise writing").result.items[0].belief_id == CONCISE
    with RecallClient(mtls_sidecar.address, tls=tls_for(pki, "bea")) as bea:
        assert [i.belief_id for i in bea.open_session(scope="veetbot").snapshot.items] == [BERLIN]
        assert bea.search("concise writing", subjects=["Andy"]).result.items == ()


def test_a_certificate_of_another_ca_or_disagreeing_headers_are_refused(pki: Path, mtls_sidecar: LocalSidecar) -> None:
    with RecallClient(mtls_sidecar.address, tls=tls_for(pki, "andy", ca_name="other-ca")) as stranger:
        with pytest.raises(RecallError) as unsigned:
            stranger.search("concise writing")
    assert unsigned.value.status == "UNAUTHENTICATED"
    with RecallClient(mtls_sidecar.address, tls=tls_for(pki, "bea"), tenant_id="acme", principal_id="andy") as mixed:
        with pytest.raises(RecallError) as disagree:
            mixed.search("concise writing")
    assert disagree.value.status == "PERMISSION_DENIED"

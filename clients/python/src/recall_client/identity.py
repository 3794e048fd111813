"""Who the client calls as, in each of the sidecar's identity modes, and the channel that carries it.

- Trusted headers (RECALL_IDENTITY=headers, on loopback or the Unix socket): ``tenant_id`` and
  ``principal_id`` go as the x-tenant-id / x-principal-id metadata of every call.
- A JWT bearer token (RECALL_IDENTITY=jwt): ``token``, a string or a callable asked for the token
  on every call (so it can refresh it), sent as call credentials. Call credentials need a secure
  channel: TLS (``tls``), or gRPC's local credentials on loopback and Unix sockets, so a token is
  never sent in the clear beyond this machine.
- mTLS (RECALL_IDENTITY=mtls): ``tls`` with the client's certificate and key.
With a verified identity the headers are optional; sent, the sidecar checks they agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import grpc
import grpc.aio

TENANT_HEADER = "x-tenant-id"
PRINCIPAL_HEADER = "x-principal-id"

TokenSource = str | Callable[[], str]


@dataclass(frozen=True)
class Tls:
    """TLS to the sidecar (RECALL_TLS_CERT_FILE), and for mTLS the client's own certificate.

    Attributes:
        root_certificates: PEM of the CA that signed the sidecar's certificate (None: the system's roots).
        certificate_chain: PEM of the client certificate (mTLS), whose SPIFFE ID names the principal.
        private_key: PEM of the client certificate's key (mTLS).
        server_name: the name to check the sidecar's certificate against, when it differs from the address's host.
    """

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None
    server_name: str | None = None


@dataclass(frozen=True)
class Identity:
    """The caller: the headers to send and the credentials of the channel."""

    tenant_id: str | None = None
    principal_id: str | None = None
    token: TokenSource | None = None
    tls: Tls | None = None

    def __post_init__(self) -> None:
        verified = self.token is not None or (self.tls is not None and self.tls.certificate_chain is not None)
        if (self.tenant_id is None) != (self.principal_id is None):
            raise ValueError("tenant_id and principal_id go together")
        if not verified and self.tenant_id is None:
            raise ValueError("tenant_id and principal_id are required unless a token or a client certificate says who calls")

    def metadata(self) -> tuple[tuple[str, str], ...]:
        if self.tenant_id is None or self.principal_id is None:
            return ()
        return ((TENANT_HEADER, self.tenant_id), (PRINCIPAL_HEADER, self.principal_id))


class _TokenPlugin(grpc.AuthMetadataPlugin):
    """Asks the token source on every call: a callable can refresh its token whenever it likes."""

    def __init__(self, token: TokenSource) -> None:
        self._token = token

    def __call__(self, context: grpc.AuthMetadataContext, callback: grpc.AuthMetadataPluginCallback) -> None:
        try:
            token = self._token() if callable(self._token) else self._token
            callback((("authorization", f"Bearer {token}"),), None)
        except Exception as error:  # a failing token source fails the call, never the channel
            callback((), error)


def _is_unix(address: str) -> bool:
    return address.startswith("unix:") or address.startswith("unix-abstract:")


def channel_credentials(address: str, identity: Identity) -> grpc.ChannelCredentials | None:
    """The channel's credentials; None for a plaintext channel (trusted headers without TLS)."""
    if identity.tls is not None:
        tls = identity.tls
        credentials = grpc.ssl_channel_credentials(tls.root_certificates, tls.private_key, tls.certificate_chain)
    elif identity.token is not None:
        credentials = grpc.local_channel_credentials(grpc.LocalConnectionType.UDS if _is_unix(address) else grpc.LocalConnectionType.LOCAL_TCP)
    else:
        return None
    if identity.token is not None:
        credentials = grpc.composite_channel_credentials(credentials, grpc.metadata_call_credentials(_TokenPlugin(identity.token)))
    return credentials


def channel_options(address: str, identity: Identity, options: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    extra = [("grpc.ssl_target_name_override", identity.tls.server_name)] if identity.tls and identity.tls.server_name else []
    # grpc-python sends a Unix socket's path as the HTTP/2 authority, which is no host name (and
    # crashed older sidecars): name the local host instead, as grpc-go and grpc-js do.
    if _is_unix(address) and not any(name == "grpc.default_authority" for name, _ in options):
        extra.append(("grpc.default_authority", "localhost"))
    return [*options, *extra]


class _CallDetails(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: grpc.CallCredentials | None
    wait_for_ready: bool | None
    compression: Any


class _SyncCallDetails(_CallDetails, grpc.ClientCallDetails):
    pass


def _with_headers(metadata: Any, headers: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    sent = [(k, v) for k, v in (metadata or ())]
    names = {k for k, _ in sent}
    return sent + [(k, v) for k, v in headers if k not in names]


class HeaderInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds the identity headers to every call of a blocking channel (the raw stubs' too)."""

    def __init__(self, headers: tuple[tuple[str, str], ...]) -> None:
        self._headers = headers

    def _details(self, d: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        return _SyncCallDetails(
            d.method, d.timeout, _with_headers(d.metadata, self._headers), d.credentials,
            getattr(d, "wait_for_ready", None), getattr(d, "compression", None),
        )

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation: Any, client_call_details: Any, request_iterator: Any) -> Any:
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation: Any, client_call_details: Any, request_iterator: Any) -> Any:
        return continuation(self._details(client_call_details), request_iterator)


def _aio_details(d: grpc.aio.ClientCallDetails, headers: tuple[tuple[str, str], ...]) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*_with_headers(d.metadata, headers))
    return grpc.aio.ClientCallDetails(d.method, d.timeout, metadata, d.credentials, d.wait_for_ready)


class AioUnaryHeaders(grpc.aio.UnaryUnaryClientInterceptor):
    """Adds the identity headers to every unary call of an asyncio channel."""

    def __init__(self, headers: tuple[tuple[str, str], ...]) -> None:
        self._headers = headers

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(_aio_details(client_call_details, self._headers), request)


class AioStreamHeaders(grpc.aio.UnaryStreamClientInterceptor):
    """Adds the identity headers to every server-streaming call of an asyncio channel (Recall)."""

    def __init__(self, headers: tuple[tuple[str, str], ...]) -> None:
        self._headers = headers

    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(_aio_details(client_call_details, self._headers), request)


def sync_channel(address: str, identity: Identity, options: Sequence[tuple[str, Any]] = (), interceptors: Sequence[Any] = ()) -> grpc.Channel:
    """A blocking channel that carries the identity on every call."""
    credentials = channel_credentials(address, identity)
    opts = channel_options(address, identity, options)
    channel = grpc.secure_channel(address, credentials, opts) if credentials else grpc.insecure_channel(address, opts)
    headers = identity.metadata()
    chain = [*([HeaderInterceptor(headers)] if headers else []), *interceptors]
    return grpc.intercept_channel(channel, *chain) if chain else channel


def aio_channel(address: str, identity: Identity, options: Sequence[tuple[str, Any]] = (), interceptors: Sequence[Any] = ()) -> grpc.aio.Channel:
    """An asyncio channel that carries the identity on every call."""
    credentials = channel_credentials(address, identity)
    opts = channel_options(address, identity, options)
    headers = identity.metadata()
    chain = [*([AioUnaryHeaders(headers), AioStreamHeaders(headers)] if headers else []), *interceptors]
    if credentials:
        return grpc.aio.secure_channel(address, credentials, opts, interceptors=chain or None)
    return grpc.aio.insecure_channel(address, opts, interceptors=chain or None)

"""The one exception a failed call raises."""

from __future__ import annotations

import grpc


class RecallError(Exception):
    """A call to the sidecar failed.

    Attributes:
        code: the gRPC status (``grpc.StatusCode.INVALID_ARGUMENT``, ``UNAVAILABLE``, ...).
        method: the RPC that failed, e.g. ``"MemoryService.Recall"``.
        message: the server's message; for INVALID_ARGUMENT it starts with the field's path
            (``"beliefs[2].confidence: must be between 0 and 1"``).
        attempts: how many times the call was sent (more than 1 when it was retried; 0 when the
            client refused it before sending).
    """

    def __init__(self, code: grpc.StatusCode, method: str, message: str, attempts: int = 1) -> None:
        super().__init__(f"{method}: {code.name}: {message}" + (f" (after {attempts} attempts)" if attempts > 1 else ""))
        self.code = code
        self.method = method
        self.message = message
        self.attempts = attempts

    @property
    def status(self) -> str:
        """The status's name as gRPC spells it: ``"INVALID_ARGUMENT"``, ``"UNAVAILABLE"``, ..."""
        return str(self.code.name)


def from_rpc_error(error: grpc.RpcError, method: str, attempts: int) -> RecallError:
    """A grpc error (sync or aio) as a RecallError with the server's status and message."""
    code = getattr(error, "code", None)
    details = getattr(error, "details", None)
    status = code() if callable(code) else grpc.StatusCode.UNKNOWN
    message = details() if callable(details) else str(error)
    return RecallError(status if isinstance(status, grpc.StatusCode) else grpc.StatusCode.UNKNOWN, method, message or "", attempts)

"""When a failed call is sent again: the TypeScript SDK's rules (src/sdk/retry.ts).

A call is retried only when that is safe: every call of this API is a read or a write that is
idempotent by id, and the failure is UNAVAILABLE, which the sidecar answers when nothing was done.
A Recall stream is retried only before its first event. Each attempt gets what is left of the
call's deadline; a retry never starts without time for it. DEADLINE_EXCEEDED and every other
status are final.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc


@dataclass(frozen=True)
class RetryPolicy:
    """Retries on UNAVAILABLE.

    Attributes:
        max_attempts: attempts in all, the first included.
        initial_backoff: seconds before the first retry, doubled each time.
    """

    max_attempts: int = 3
    initial_backoff: float = 0.05


DEFAULT_RETRY = RetryPolicy()

#: A retry is not worth starting with less than this (seconds) left of the deadline.
MIN_ATTEMPT = 0.02


def backoff_before_retry(code: grpc.StatusCode, attempt: int, policy: RetryPolicy, remaining: float, can_retry: bool) -> float | None:
    """Seconds to wait before sending attempt ``attempt + 1``, or None when the failure is final.

    Args:
        code: the status attempt ``attempt`` failed with.
        attempt: the attempt that failed, counting from 1.
        remaining: seconds left of the call's deadline.
        can_retry: False once the caller saw an effect of the attempt (a stream's first event).
    """
    if code != grpc.StatusCode.UNAVAILABLE or attempt >= policy.max_attempts or not can_retry:
        return None
    backoff = policy.initial_backoff * 2 ** (attempt - 1)
    return backoff if remaining - backoff >= MIN_ATTEMPT else None

import { Code, ConnectError } from "@connectrpc/connect";
import {
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  UnavailableError,
} from "../domain/errors.js";
import { StoreTimeoutError, WriteOutcomeUnknownError } from "../store/store-deadline.js";

/** Network and server-state failures of either store: the dependency is down, not the request wrong. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  // A statement or lock wait cut off by the timeouts a transaction sets from its deadline.
  "57014", // query_canceled (statement_timeout)
  "55P03", // lock_not_available (lock_timeout)
  "25P03", // idle_in_transaction_session_timeout
]);

export function isUnavailable(error: unknown): boolean {
  if (error instanceof UnavailableError) return true;
  if (typeof error !== "object" || error === null) return false;
  const code = String((error as { code?: unknown }).code ?? "");
  if (UNAVAILABLE_CODES.has(code) || code.startsWith("08")) return true;
  const message = String((error as { message?: unknown }).message ?? "");
  return /PGlite is closed|write CONNECTION_CLOSED|Connection terminated/i.test(message);
}

/**
 * The one place domain errors become gRPC statuses. Anything unexpected is
 * INTERNAL with a generic message: internals (SQL, stack, belief text) never
 * leave the process; the log has them.
 */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof InvalidArgumentError) return new ConnectError(error.message, Code.InvalidArgument);
  if (error instanceof NotFoundError) return new ConnectError(error.message, Code.NotFound);
  if (error instanceof PermissionDeniedError) return new ConnectError(error.message, Code.PermissionDenied);
  if (error instanceof FailedPreconditionError) return new ConnectError(error.message, Code.FailedPrecondition);
  // A call cut off by its store deadline says what happened to the write (nothing written, or outcome unknown).
  if (error instanceof StoreTimeoutError || error instanceof WriteOutcomeUnknownError) return new ConnectError(error.message, Code.Unavailable);
  if (isUnavailable(error)) return new ConnectError("memory store unavailable; retry later", Code.Unavailable);
  if (error instanceof Error && error.name === "AbortError") return new ConnectError("request cancelled", Code.Canceled);
  return new ConnectError("internal error", Code.Internal);
}

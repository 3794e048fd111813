import { Code, ConnectError } from "@connectrpc/connect";
import {
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  isUnavailable,
} from "../domain/errors.js";
import { decodeErrorAsInvalidArgument } from "./wire/decode-errors.js";
import { StoreTimeoutError, WriteOutcomeUnknownError } from "../store/store-deadline.js";

/**
 * The one place domain errors become gRPC statuses. Anything unexpected is
 * INTERNAL with a generic message: internals (SQL, stack, belief text) never
 * leave the process; the log has them.
 */
export function toConnectError(error: unknown): ConnectError {
  // A request that does not decode is the caller's mistake, whichever kind of call read it.
  if (error instanceof ConnectError) return decodeErrorAsInvalidArgument(error) ?? error;
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

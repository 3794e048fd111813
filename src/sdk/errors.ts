import { Code, ConnectError } from "@connectrpc/connect";

/**
 * A failed call to the sidecar, with its gRPC status. `code` is the status
 * number (connect's Code has the gRPC numbering: 3 INVALID_ARGUMENT, 5
 * NOT_FOUND, 14 UNAVAILABLE, …) and `status` its name; `message` is the
 * server's message (for INVALID_ARGUMENT it starts with the field's path).
 */
export class RecallError extends Error {
  override readonly name = "RecallError";
  constructor(
    /** The gRPC status code. */
    readonly code: Code,
    /** The RPC that failed, e.g. "MemoryService.Recall". */
    readonly method: string,
    message: string,
    /** How many times the call was sent (more than 1 when it was retried). */
    readonly attempts = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The status's name as gRPC spells it: "INVALID_ARGUMENT", "UNAVAILABLE", … */
  get status(): string {
    return STATUS_NAMES[this.code] ?? "UNKNOWN";
  }
}

const STATUS_NAMES: Record<number, string> = {
  [Code.Canceled]: "CANCELLED",
  [Code.Unknown]: "UNKNOWN",
  [Code.InvalidArgument]: "INVALID_ARGUMENT",
  [Code.DeadlineExceeded]: "DEADLINE_EXCEEDED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.AlreadyExists]: "ALREADY_EXISTS",
  [Code.PermissionDenied]: "PERMISSION_DENIED",
  [Code.ResourceExhausted]: "RESOURCE_EXHAUSTED",
  [Code.FailedPrecondition]: "FAILED_PRECONDITION",
  [Code.Aborted]: "ABORTED",
  [Code.OutOfRange]: "OUT_OF_RANGE",
  [Code.Unimplemented]: "UNIMPLEMENTED",
  [Code.Internal]: "INTERNAL",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DataLoss]: "DATA_LOSS",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
};

/** Any error of a call as a RecallError (connect's errors keep their code; anything else is UNKNOWN). */
export function toRecallError(error: unknown, method: string, attempts: number): RecallError {
  if (error instanceof RecallError) return error;
  const connect = ConnectError.from(error);
  return new RecallError(connect.code, method, connect.rawMessage, attempts, { cause: error });
}

export { Code };

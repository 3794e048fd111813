/**
 * Typed domain errors. The server maps each to one gRPC status in one place
 * (server/errors.ts); anything else leaves as INTERNAL without its message.
 */

export class InvalidArgumentError extends Error {
  override readonly name = "InvalidArgumentError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
}

export class PermissionDeniedError extends Error {
  override readonly name = "PermissionDeniedError";
}

export class FailedPreconditionError extends Error {
  override readonly name = "FailedPreconditionError";
}

/** The store (or another dependency) cannot be reached right now; retrying later may work. */
export class UnavailableError extends Error {
  override readonly name = "UnavailableError";
}

/**
 * Typed domain errors. The server maps each to one gRPC status in one place
 * (server/errors.ts); anything else leaves as INTERNAL without its message.
 */

/** One bad field of a request: its snake_case path ("beliefs[2].confidence") and what is wrong with it. */
export interface FieldProblem {
  readonly field: string;
  readonly problem: string;
}

/**
 * Bad input. It lists every problem found, so a caller fixes them all in one
 * round trip: the message is "beliefs[0].subject: is required; beliefs[0].confidence: …".
 */
export class InvalidArgumentError extends Error {
  override readonly name = "InvalidArgumentError";
  /** Every problem, the first being `field`'s. */
  readonly problems: readonly FieldProblem[];
  constructor(
    readonly field: string,
    problem: string,
    more: readonly FieldProblem[] = [],
  ) {
    const problems = [{ field, problem }, ...more];
    super(problems.map((p) => `${p.field}: ${p.problem}`).join("; "));
    this.problems = problems;
  }

  /** One error for several problems (at least one). */
  static of(problems: readonly FieldProblem[]): InvalidArgumentError {
    const [first, ...rest] = problems;
    if (!first) throw new TypeError("InvalidArgumentError.of needs at least one problem");
    return new InvalidArgumentError(first.field, first.problem, rest);
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

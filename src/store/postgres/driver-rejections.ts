import postgres from "postgres";
import type { Logger } from "../../log/logger.js";

/**
 * postgres.js 3.4.9 sets up every new connection (every reconnect too) with a
 * query of its own, the array types (`fetch_types`), and drops that query's
 * promise (porsager/postgres#1192, #1205, #1223). When the connection is lost
 * during it, or the server answers it with an error (a restart's
 * `57P01`, a cancel), the rejection has no handler, and Node's default ends
 * the process. Nothing of ours can hold that promise, and nothing is lost
 * with it: the driver re-opens the connection on demand, and the call that
 * wanted the connection gets its own outcome.
 *
 * So a serving process keeps going after an unhandled rejection that the
 * database driver raised, with a warning. Any other unhandled rejection is a
 * bug of ours and is thrown again, which ends the process exactly as Node's
 * default would.
 */
export function keepServingThroughDriverRejections(logger: Pick<Logger, "warn">): void {
  process.on("unhandledRejection", driverRejectionListener(logger));
}

/** The `unhandledRejection` listener: a driver error is logged, anything else thrown again (the process ends). */
export function driverRejectionListener(logger: Pick<Logger, "warn">): (reason: unknown) => void {
  return (reason) => {
    if (!isDriverError(reason)) throw reason;
    logger.warn({ err: reason }, "a PostgreSQL connection failed while postgres.js set it up; it is re-opened on demand");
  };
}

/** postgres.js's own connection errors (errors.js `connection()`): `code` and `errno` are the same name. */
const DRIVER_CONNECTION_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT"]);
/** The socket errors the driver passes on as a query's rejection. */
const SOCKET_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);

/** An error the database driver raised: the server's answer, or the connection's failure. */
export function isDriverError(reason: unknown): boolean {
  if (reason instanceof postgres.PostgresError) return true;
  if (!(reason instanceof Error)) return false;
  const { code, errno, syscall } = reason as Error & { code?: unknown; errno?: unknown; syscall?: unknown };
  if (typeof code !== "string") return false;
  if (DRIVER_CONNECTION_CODES.has(code)) return errno === code;
  return SOCKET_CODES.has(code) && typeof syscall === "string";
}

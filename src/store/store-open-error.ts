import { StartupError } from "../domain/startup-error.js";
import { isUnavailable } from "../domain/errors.js";

/**
 * Why the configured store could not be opened, in one line naming the
 * setting: an unreachable or refusing PostgreSQL server (RECALL_DATABASE_URL,
 * shown without its password) or an unusable PGlite directory
 * (RECALL_DATA_DIR). Anything else (a failing migration) is left as it is.
 */

/** PostgreSQL errors a URL fix resolves: bad password, unknown role or database. */
const CONNECT_REFUSALS: Record<string, string> = {
  "28P01": "password authentication failed",
  "28000": "the server refused the role",
  "3D000": "the database does not exist",
};

export function postgresOpenError(error: unknown, url: string): Error {
  const code = String((error as { code?: unknown }).code ?? "");
  const refusal = CONNECT_REFUSALS[code];
  if (refusal === undefined && !isUnavailable(error)) return error as Error;
  const reason = refusal ?? `the server cannot be reached (${code || (error as Error).message})`;
  return new StartupError(`cannot open the PostgreSQL store at ${redacted(url)}: ${reason} (RECALL_DATABASE_URL)`);
}

export function pgliteOpenError(error: unknown, dataDir: string): Error {
  if (error instanceof StartupError) return error;
  const e = error as NodeJS.ErrnoException;
  const reason =
    e.code === "EACCES" || e.code === "EPERM"
      ? "permission denied"
      : e.code === "ENOTDIR" || e.code === "EEXIST"
        ? "a part of the path is a file, not a directory"
        : (e.code ?? e.message);
  return new StartupError(`cannot open the embedded store in ${dataDir}: ${reason} (RECALL_DATA_DIR=${dataDir})`);
}

/** postgres://user@host:port/db: never the password. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return "the configured URL";
  }
}

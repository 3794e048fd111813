import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../domain/errors.js";
import type { Cursor } from "../store/inspect-store.js";

/**
 * The inspection lists' page tokens: the keyset position of the last row
 * shown, bound to a fingerprint of the request's filters, so a token cannot
 * continue a different list. Opaque to callers (base64url JSON).
 */

/** PostgreSQL's text form of a timestamptz, as the store wrote it into the cursor. */
const TIMESTAMP_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d)?$/;

export function encodeCursor(cursor: Cursor, queryKey: string): string {
  return Buffer.from(JSON.stringify([cursor.key, cursor.id, queryKey])).toString("base64url");
}

/** The cursor of `token`, or null for an empty token (the first page). */
export function decodeCursor(token: string, queryKey: string, idPattern: RegExp): Cursor | null {
  if (token === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || !parsed.every((v) => typeof v === "string")) {
    throw new InvalidArgumentError("page_token", "is not a token this server issued");
  }
  const [key, id, boundTo] = parsed as [string, string, string];
  if (!TIMESTAMP_TEXT.test(key) || !idPattern.test(id)) throw new InvalidArgumentError("page_token", "is not a token this server issued");
  if (boundTo !== queryKey) throw new InvalidArgumentError("page_token", "belongs to a different query (its filters changed)");
  return { key, id };
}

/** A short fingerprint of what a list is filtered by. */
export function queryKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts), "utf8").digest("base64url").slice(0, 16);
}

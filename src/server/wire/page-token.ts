import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../../domain/errors.js";
import type { Episode } from "../../domain/model.js";

/**
 * Opaque keyset cursor for RecallEpisodes: the last returned (occurred_at,
 * sequence, episode_id), and, when given, a fingerprint of the query it
 * belongs to, so a token cannot be replayed against a different session,
 * time range or archival setting.
 */

export function encodePageToken(last: Episode, queryKey?: string): string {
  const cursor: unknown[] = [last.occurredAt.toISOString(), last.sequence, last.episodeId];
  if (queryKey !== undefined) cursor.push(queryKey);
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodePageToken(token: string, queryKey?: string): { occurredAt: Date; sequence: number; episodeId: string } {
  let decoded: { occurredAt: Date; sequence: number; episodeId: string; key: unknown };
  try {
    const [at, sequence, episodeId, key] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [string, number, string, unknown];
    if (typeof at !== "string" || typeof episodeId !== "string") throw new Error("bad token");
    const occurredAt = new Date(at);
    if (Number.isNaN(occurredAt.getTime()) || !Number.isSafeInteger(sequence) || !/^[0-9a-f-]{36}$/.test(episodeId)) {
      throw new Error("bad token");
    }
    decoded = { occurredAt, sequence, episodeId, key };
  } catch {
    throw new InvalidArgumentError("page_token", "is not a token this server issued");
  }
  if (queryKey !== undefined && decoded.key !== queryKey) {
    throw new InvalidArgumentError("page_token", "belongs to a different query (session, time range or include_archival changed)");
  }
  return { occurredAt: decoded.occurredAt, sequence: decoded.sequence, episodeId: decoded.episodeId };
}

/** A short fingerprint of what scopes an episode query; paging continues only within the same scope. */
export function episodeQueryKey(q: { sessionId: string | null; startTime: Date | null; endTime: Date | null; includeArchival: boolean }): string {
  const scope = JSON.stringify([q.sessionId, q.startTime?.toISOString() ?? null, q.endTime?.toISOString() ?? null, q.includeArchival]);
  return createHash("sha256").update(scope, "utf8").digest("base64url").slice(0, 16);
}

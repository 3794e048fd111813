import { InvalidArgumentError } from "../domain/errors.js";
import type { Episode } from "../domain/model.js";

/** Opaque keyset cursor for RecallEpisodes: the last returned (occurred_at, sequence, episode_id). */

export function encodePageToken(last: Episode): string {
  return Buffer.from(JSON.stringify([last.occurredAt.toISOString(), last.sequence, last.episodeId])).toString("base64url");
}

export function decodePageToken(token: string): { occurredAt: Date; sequence: number; episodeId: string } {
  try {
    const [at, sequence, episodeId] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [string, number, string];
    if (typeof at !== "string" || typeof episodeId !== "string") throw new Error("bad token");
    const occurredAt = new Date(at);
    if (Number.isNaN(occurredAt.getTime()) || !Number.isSafeInteger(sequence) || !/^[0-9a-f-]{36}$/.test(episodeId)) {
      throw new Error("bad token");
    }
    return { occurredAt, sequence, episodeId };
  } catch {
    throw new InvalidArgumentError("page_token", "is not a token this server issued");
  }
}

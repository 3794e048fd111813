import { createHash } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID derived from its parts (RFC 9562 version 8, the first 16 bytes of a
 * SHA-256): the same record of the same file gets the same id on every run,
 * so importing again (after an interruption, or by mistake) writes no
 * duplicate. Writes are idempotent by id.
 */
export function stableUuid(...parts: readonly string[]): string {
  const bytes = createHash("sha256").update(JSON.stringify(parts)).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The peer's own id when it is a UUID (mem0, Graphiti and Zep use UUIDs), else one derived from it. */
export function peerUuid(peer: string, id: string): string {
  return UUID.test(id) ? id.toLowerCase() : stableUuid(peer, id);
}

import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import type { Principal, RecallTrace, RecalledBelief } from "../domain/model.js";
import type { TraceKey } from "../recall/pipeline.js";

/**
 * One trace in the outage spool's file, framed so that a reader never has to
 * guess where it ends or whether it is whole (docs/adr/0028):
 *
 *     RS1 <payload bytes> <crc32, 8 hex> <key JSON>\n
 *     <payload JSON>\n
 *
 * The key (tenant, principal, trace id, session, turn, moment) lets the
 * spool tell, without reading payloads, which traces it holds; the CRC-32
 * covers the key and the payload. Neither JSON text holds a raw newline, so
 * a damaged record is skipped up to the next line and the records after it
 * are read as before.
 *
 * The payload is the trace with its ranked list compacted: each item keeps
 * its ids, scores, arms and flags, and instead of its subject and statement
 * (most of a trace: 100 candidates of 8,000 characters made 2.4 MB lines) a
 * hash of them. The texts are joined back from the beliefs table when the
 * trace is replayed (spooled-ranked.ts), and the hash tells whether they are
 * still the ones the recall ranked.
 */

export const RECORD_MAGIC = "RS1 ";

export interface SpooledTrace {
  principal: Principal;
  trace: RecallTrace;
}

/** The spool's key of a trace: who it belongs to and what a read may look for. */
export interface SpoolKey extends TraceKey {
  tenantId: string;
  principalId: string;
}

/** A ranked item as spooled: its subject and statement replaced by their hash. */
export type CompactRankedBelief = Omit<RecalledBelief, "subject" | "statement"> & { textSha256: string };

/** A trace read back from the spool: its ranked list may still lack its texts (joinRankedTexts fills them in). */
export interface SpooledRecord {
  principal: Principal;
  trace: Omit<RecallTrace, "ranked"> & { ranked: (RecalledBelief | CompactRankedBelief)[] | null };
}

/** The hash that stands for a ranked item's subject and statement. */
export function rankedTextSha256(subject: string, statement: string): string {
  // 128 bits: enough to tell a rewritten text, half the bytes of the whole hash per item.
  return createHash("sha256").update(subject).update("\u0000").update(statement).digest("hex").slice(0, 32);
}

export function keyOf(item: SpooledTrace): SpoolKey {
  const { principal: p, trace: t } = item;
  return { tenantId: p.tenantId, principalId: p.principalId, id: t.id, sessionId: t.sessionId, turnId: t.turnId, moment: t.moment };
}

/** One framed record, compacted. */
export function encodeRecord(item: SpooledTrace): Buffer {
  const ranked = item.trace.ranked?.map(compactItem) ?? null;
  const payload = Buffer.from(toJson({ principal: item.principal, trace: { ...item.trace, ranked } }), "utf8");
  const k = keyOf(item);
  const key = Buffer.from(JSON.stringify([k.tenantId, k.principalId, k.id, k.sessionId, k.turnId, k.moment]), "utf8");
  const header = `${RECORD_MAGIC}${payload.length} ${checksum(key, payload)} `;
  return Buffer.concat([Buffer.from(header, "utf8"), key, NEWLINE, payload, NEWLINE]);
}

export interface RecordHeader {
  payloadBytes: number;
  crc: string;
  key: SpoolKey;
  keyBytes: Buffer;
}

/** The header line (without its newline), or null when it is not one. */
export function parseHeader(line: Buffer): RecordHeader | null {
  const text = line.toString("utf8");
  const match = /^RS1 (\d{1,15}) ([0-9a-f]{8}) (\[.*\])$/.exec(text);
  if (!match) return null;
  try {
    const key = JSON.parse(match[3]!) as unknown;
    if (!Array.isArray(key) || key.length !== 6 || !key.every((v) => typeof v === "string")) return null;
    const [tenantId, principalId, id, sessionId, turnId, moment] = key as string[];
    return {
      payloadBytes: Number(match[1]),
      crc: match[2]!,
      key: { tenantId: tenantId!, principalId: principalId!, id: id!, sessionId: sessionId!, turnId: turnId!, moment: moment as TraceKey["moment"] },
      keyBytes: Buffer.from(match[3]!, "utf8"),
    };
  } catch {
    return null;
  }
}

/** The record's payload, checked against its header; throws (with the reason) when it does not decode. */
export function decodePayload(header: RecordHeader, payload: Buffer): SpooledRecord {
  if (checksum(header.keyBytes, payload) !== header.crc) throw new Error("checksum mismatch");
  const record = decodeJsonLine(payload.toString("utf8"));
  const k = keyOf(record as SpooledTrace);
  const h = header.key;
  if (k.tenantId !== h.tenantId || k.principalId !== h.principalId || k.id !== h.id) throw new Error("payload does not match its key");
  return record;
}

/** A trace line of the spool's first format (plain JSON lines, before issue 44): still replayed. */
export function decodeJsonLine(line: string): SpooledRecord {
  const value = JSON.parse(line, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === "$date") return new Date((v as { $date: string }).$date);
    }
    return v;
  }) as unknown;
  if (!isRecord(value)) throw new Error("not a spooled trace");
  return value;
}

function isRecord(value: unknown): value is SpooledRecord {
  const v = value as { principal?: Partial<Principal>; trace?: Partial<RecallTrace> } | null;
  return (
    typeof v?.principal?.tenantId === "string" &&
    typeof v.principal.principalId === "string" &&
    typeof v.trace?.id === "string" &&
    v.trace.createdAt instanceof Date &&
    v.trace.asOf instanceof Date &&
    Array.isArray(v.trace.returned) &&
    (v.trace.ranked === null || Array.isArray(v.trace.ranked))
  );
}

function compactItem(b: RecalledBelief): CompactRankedBelief {
  const { subject, statement, ...rest } = b;
  return { ...rest, textSha256: rankedTextSha256(subject, statement) };
}

const NEWLINE = Buffer.from("\n");

function checksum(key: Buffer, payload: Buffer): string {
  return crc32(payload, crc32(NEWLINE, crc32(key))).toString(16).padStart(8, "0");
}

/** JSON with Dates as {"$date": ISO}, so they come back as Dates. */
function toJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : v;
  });
}

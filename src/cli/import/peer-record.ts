import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";

/**
 * What every format's mapping produces: records in the `recall import`
 * format (protobuf JSON, `{"belief": {...}}` or `{"episode": {...}}`), each
 * with the line and the path of the peer record it came from, so a bad one is
 * reported where the user can find it. A mapping throws InvalidArgumentError
 * naming the peer's field ("results[3].memory: is required").
 */

export type ImportRecord = { belief: JsonObject } | { episode: JsonObject };

export interface Located {
  /** 1-based line of the record in the file. */
  line: number;
  /** The record's path in the file ("results[3]", "edges[0]"); empty for a JSON Lines record. */
  at: string;
  record: ImportRecord;
}

export interface Rejected {
  line: number;
  message: string;
}

export interface Mapped {
  records: Located[];
  rejected: Rejected[];
  /** Peer records deliberately not imported, by reason ("of another user", "system messages"). */
  leftOut: Map<string, number>;
  /** The peer's owners (mem0 user_id, Graphiti group_id) seen, for the one-principal check. */
  owners: Set<string>;
}

/** Settings a plain import gets; each has a flag (docs/importing.md, "Defaults"). */
export interface MappingOptions {
  /** origin_scope of beliefs, project of episodes. */
  scope: string;
  /** Overrides the subject a mapping would choose. */
  subject?: string | undefined;
  beliefType?: string | undefined;
  authority?: "AUTHORITY_USER" | "AUTHORITY_AFFIRMED" | "AUTHORITY_INFERRED" | undefined;
  confidence?: number | undefined;
  /** Only this owner's records (mem0 user_id, Graphiti group_id). */
  user?: string | undefined;
  /** session_id of episodes whose records name none. */
  session: string;
  /** occurred_at of messages that carry no time. */
  at: Date;
  /** The time the import runs: what "already ended" is measured against. */
  now: Date;
}

export function emptyMapped(): Mapped {
  return { records: [], rejected: [], leftOut: new Map(), owners: new Set() };
}

export function leaveOut(into: Mapped, reason: string): void {
  into.leftOut.set(reason, (into.leftOut.get(reason) ?? 0) + 1);
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function objectAt(value: JsonValue | undefined, at: string): JsonObject {
  if (!isObject(value)) throw new InvalidArgumentError(at, "must be a JSON object");
  return value;
}

/** A string field; absent, null and "" are undefined. */
export function text(record: JsonObject, key: string, at: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new InvalidArgumentError(`${at}.${key}`, "must be a string");
  return value;
}

export function requiredText(record: JsonObject, key: string, at: string): string {
  const value = text(record, key, at);
  if (value === undefined || value.trim() === "") throw new InvalidArgumentError(`${at}.${key}`, "is required");
  return value;
}

/** A time field (RFC 3339 / ISO 8601, as Python's isoformat() writes it), as RFC 3339 UTC. */
export function time(record: JsonObject, key: string, at: string): string | undefined {
  const value = text(record, key, at);
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`${at}.${key}`, `must be a time (RFC 3339), not ${JSON.stringify(value.slice(0, 40))}`);
  return new Date(ms).toISOString();
}

export function stringList(record: JsonObject, key: string, at: string): string[] {
  const value = record[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw new InvalidArgumentError(`${at}.${key}`, "must be a list of strings");
  return value as string[];
}

/** The belief fields a mapping does not take from the peer: the documented defaults, or the flags that override them. */
export function beliefDefaults(options: MappingOptions, peer: { beliefType: string; authority: NonNullable<MappingOptions["authority"]>; confidence: number; scopeLevel: string; portability: string }): JsonObject {
  return {
    belief_type: options.beliefType ?? peer.beliefType,
    authority: options.authority ?? peer.authority,
    confidence: options.confidence ?? peer.confidence,
    origin_scope: options.scope,
    scope_level: peer.scopeLevel,
    portability: peer.portability,
  };
}

/** Runs `map` on one peer record, turning a bad one into a rejection with its line. */
export function mapEach<T>(into: Mapped, items: readonly T[], lineOf: (i: number) => number, map: (item: T, i: number) => void): void {
  items.forEach((item, i) => {
    try {
      map(item, i);
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      into.rejected.push({ line: lineOf(i), message: error.message });
    }
  });
}

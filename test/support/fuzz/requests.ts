import type { Json } from "../grpc-client.js";
import type { Rng } from "./rng.js";

/**
 * The fuzz's request generator: a valid request for every RPC, then one of
 * two kinds of damage. Field mutations replace one leaf of the request with
 * a hostile value of the same protobuf type (so grpc-js still serializes it:
 * the server, not the client, must cope). Byte mutations take the serialized
 * request and break the protobuf or the gRPC framing around it. Everything
 * is drawn from the seeded Rng.
 */

export type Service = "memory" | "write";

export interface Rpc {
  service: Service;
  method: string;
  streaming: boolean;
  valid: (rng: Rng) => Json;
}

const ts = (rng: Rng) => ({ seconds: String(1_700_000_000 + rng.int(100_000_000)), nanos: 0 });
const words = ["deploy", "Andy", "editor", "veetbot", "Helix", "Berlin", "staging", "CI", "Rust", "prefers"];
const text = (rng: Rng) => Array.from({ length: 1 + rng.int(6) }, () => rng.pick(words)).join(" ");

const belief = (rng: Rng): Json => ({
  belief_id: rng.uuid(),
  subject: rng.pick(words),
  statement: text(rng),
  belief_type: rng.pick(["preference", "fact", "project_fact"]),
  status: "BELIEF_STATUS_ACTIVE",
  confidence: rng.next(),
  authority: rng.pick(["AUTHORITY_USER", "AUTHORITY_AFFIRMED", "AUTHORITY_INFERRED"]),
  origin_scope: rng.pick(["veetbot", "atlas"]),
  scope_level: "SCOPE_LEVEL_USER",
  portability: "PORTABILITY_PORTABLE",
  recorded_at: ts(rng),
});

const episode = (rng: Rng): Json => ({
  episode_id: rng.uuid(),
  session_id: `s-${rng.int(5)}`,
  occurred_at: ts(rng),
  sequence: String(rng.int(1000)),
  actor: "user",
  kind: "message",
  content: text(rng),
  project: "veetbot",
});

export const RPCS: readonly Rpc[] = [
  { service: "write", method: "PutBeliefs", streaming: false, valid: (r) => ({ beliefs: [belief(r), belief(r)] }) },
  { service: "write", method: "AppendEpisodes", streaming: false, valid: (r) => ({ episodes: [episode(r)] }) },
  { service: "write", method: "SetPersonaEntry", streaming: false, valid: (r) => ({ belief_id: r.uuid() }) },
  { service: "write", method: "RemovePersonaEntry", streaming: false, valid: (r) => ({ belief_id: r.uuid() }) },
  { service: "write", method: "PutSubjectAliases", streaming: false, valid: (r) => ({ aliases: [{ alias: r.pick(words), subject: r.pick(words) }] }) },
  { service: "write", method: "RecordCitations", streaming: false, valid: (r) => ({ trace_id: r.uuid(), belief_ids: [r.uuid()], turn_id: "t-1" }) },
  {
    service: "write",
    method: "RejectBelief",
    streaming: false,
    valid: (r) => ({ rejection_id: r.uuid(), belief_id: r.uuid(), kind: "REJECTION_KIND_NOT_HERE", scope: "veetbot", reason: text(r) }),
  },
  { service: "write", method: "DeleteSessionTraces", streaming: false, valid: (r) => ({ session_id: `s-${r.int(5)}` }) },
  {
    service: "memory",
    method: "Recall",
    streaming: true,
    valid: (r) => ({
      moment: r.pick(["MOMENT_IN_TURN", "MOMENT_SNAPSHOT", "MOMENT_CHILD_RUN"]),
      session_id: `s-${r.int(5)}`,
      turn_id: `t-${r.int(50)}`,
      query: { text: text(r), current_scope: "veetbot", subjects: [r.pick(words)], max_items: r.int(20), budget_tokens: r.int(2000) },
    }),
  },
  {
    service: "memory",
    method: "Search",
    streaming: false,
    valid: (r) => ({ text: text(r), subjects: [r.pick(words)], scope: "veetbot", max_items: r.int(20), budget_tokens: r.int(2000), session_id: "s-1" }),
  },
  { service: "memory", method: "RecallEpisodes", streaming: false, valid: (r) => ({ session_id: `s-${r.int(5)}`, page_size: r.int(100), budget_tokens: 0 }) },
  { service: "memory", method: "GetTrace", streaming: false, valid: (r) => (r.chance(0.5) ? { trace_id: r.uuid() } : { turn_id: `t-${r.int(50)}` }) },
];

const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "💥".repeat(3000),
  "x".repeat(70_000),
  "'; DROP TABLE beliefs; --",
  "%s%n%x",
  "\u202e\u0301\ufeff",
  "not-a-uuid",
  "00000000-0000-0000-0000-000000000000",
];
const HOSTILE_NUMBERS = [-1, 0, 1, 64, 200, 201, 16_001, 2 ** 31 - 1, -(2 ** 31), 1e9, 0.5, -0.0001, 1.0000001, Number.MAX_VALUE];
const HOSTILE_INT64 = ["9223372036854775807", "-9223372036854775808", "9007199254740993", "-1", "0"];
const HOSTILE_TIMESTAMPS = [
  { seconds: "-62135596801", nanos: 0 },
  { seconds: "253402300800", nanos: 0 },
  { seconds: "0", nanos: -1 },
  { seconds: "0", nanos: 1_000_000_000 },
  { seconds: "9223372036854775807", nanos: 0 },
];

interface Leaf {
  parent: Json | unknown[];
  key: string | number;
  value: unknown;
}

function leaves(node: Json | unknown[], out: Leaf[] = []): Leaf[] {
  for (const [key, value] of Object.entries(node)) {
    const k = Array.isArray(node) ? Number(key) : key;
    out.push({ parent: node, key: k, value });
    if (value && typeof value === "object" && !isTimestamp(value)) leaves(value as Json, out);
  }
  return out;
}

function isTimestamp(value: object): boolean {
  return "seconds" in value && "nanos" in value;
}

/** Replaces one leaf (or subtree) with a hostile value of its type; returns a description for the failure report. */
export function mutateFields(rng: Rng, request: Json, rpc: Rpc): string {
  const all = leaves(request);
  const leaf = rng.pick(all);
  const set = (v: unknown) => ((leaf.parent as Record<string | number, unknown>)[leaf.key] = v);
  const where = `${rpc.method}.${String(leaf.key)}`;
  const v = leaf.value;
  if (typeof v === "string" && /^-?\d+$/.test(v) && leaf.key === "sequence") {
    set(rng.pick(HOSTILE_INT64));
  } else if (typeof v === "string" && /^[A-Z_]+$/.test(v)) {
    // An enum: an unknown number, or another enum's name that is valid for no field here.
    set(rng.chance(0.5) ? rng.int(1000) - 10 : 0);
  } else if (typeof v === "string") {
    set(rng.chance(0.8) ? rng.pick(HOSTILE_STRINGS) : rng.bytes(1 + rng.int(40)).toString("latin1"));
  } else if (typeof v === "number") {
    const n = rng.pick(HOSTILE_NUMBERS);
    set(leaf.key === "confidence" ? rng.pick([NaN, Infinity, -1, 2, n]) : Math.trunc(Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, n))));
  } else if (v && typeof v === "object" && isTimestamp(v)) {
    set(rng.pick(HOSTILE_TIMESTAMPS));
  } else if (Array.isArray(v)) {
    set(rng.chance(0.5) ? [] : Array.from({ length: rng.pick([101, 1001]) }, () => v[0] ?? ""));
  } else if (!Array.isArray(leaf.parent)) {
    // An absent message field (a hole in a repeated one would not serialize).
    delete (leaf.parent as Record<string | number, unknown>)[leaf.key];
  }
  return where;
}

/** Group-nesting bomb: unknown field 15, start-group tags then end-group tags. */
function groupBomb(depth: number): Buffer {
  return Buffer.concat([Buffer.alloc(depth, (15 << 3) | 3), Buffer.alloc(depth, (15 << 3) | 4)]);
}

/** Breaks serialized request bytes or the framing around them; returns the body to send and a description. */
export function mutateBytes(rng: Rng, message: Buffer): { body: Buffer; headers: Record<string, string>; what: string } {
  const frame = (payload: Buffer, flags = 0, length = payload.length) => {
    const head = Buffer.alloc(5);
    head[0] = flags;
    head.writeUInt32BE(length >>> 0, 1);
    return Buffer.concat([head, payload]);
  };
  const m = Buffer.from(message);
  switch (rng.int(10)) {
    case 0: {
      for (let i = 0, n = 1 + rng.int(4); i < n && m.length > 0; i++) {
        const at = rng.int(m.length);
        m[at] = m[at]! ^ (1 << rng.int(8));
      }
      return { body: frame(m), headers: {}, what: "bit flips" };
    }
    case 1:
      return { body: frame(m.subarray(0, rng.int(m.length + 1))), headers: {}, what: "truncated message" };
    case 2: {
      const at = rng.int(m.length + 1);
      return { body: frame(Buffer.concat([m.subarray(0, at), rng.bytes(1 + rng.int(16)), m.subarray(at)])), headers: {}, what: "inserted bytes" };
    }
    case 3:
      return { body: frame(rng.bytes(rng.int(200))), headers: {}, what: "random bytes" };
    case 4:
      return { body: frame(Buffer.concat([m, groupBomb(50 + rng.int(400))])), headers: {}, what: "nested unknown groups" };
    case 5:
      return { body: frame(m, 1), headers: {}, what: "compressed flag without grpc-encoding" };
    case 6:
      return { body: frame(m, 1), headers: { "grpc-encoding": rng.pick(["gzip", "br", "snappy"]) }, what: "compressed flag, bytes not compressed" };
    case 7: {
      const delta = rng.pick([-3, -1, 1, 7, 1 << 20]);
      return { body: frame(m, 0, Math.max(0, m.length + delta)), headers: {}, what: `length prefix off by ${delta}` };
    }
    case 8:
      return { body: Buffer.concat([frame(m), frame(m)]), headers: {}, what: "two messages" };
    default:
      return { body: rng.chance(0.5) ? Buffer.alloc(0) : m.subarray(0, rng.int(5)), headers: {}, what: "no or partial frame header" };
  }
}

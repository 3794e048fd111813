import { create, toBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { ArmCandidateSchema, ArmResultSchema, type ArmResult } from "../../gen/memory/v1/memory_service_pb.js";
import type { ArmOutcome } from "../../recall/arms/arm.js";
import { repeatedMessageField, varintSize, writeVarint } from "./repeated-field.js";

/**
 * An in-turn recall streams its arms' candidates, about 83 ArmCandidates in
 * three ArmResults, and reflective toBinary spends much of their time on
 * them: a message per candidate, its belief id's UTF-8, and a writer of its
 * own joined into the event. A candidate is two fields whose bytes recur: its
 * belief id's (the same for every call that returns that belief) and its
 * rank's. Both are encoded once and the candidates field is joined from
 * them (repeated-field.ts).
 */

/** Belief ids whose field is kept (a 38-byte array each for a UUID): a few heavy principals' worth. Cleared when full. */
const MAX_BELIEF_IDS = 20_000;
const BELIEF_ID_BYTES = new Map<string, Uint8Array>();
/** Ranks whose field is kept: past any arm's candidate cap. */
const RANK_BYTES: Uint8Array[] = [];
const MAX_RANK_KEPT = 1_024;
const CANDIDATES_FIELD = ArmResultSchema.field.candidates!.number;

function beliefIdBytes(beliefId: string): Uint8Array {
  let bytes = BELIEF_ID_BYTES.get(beliefId);
  if (!bytes) {
    if (BELIEF_ID_BYTES.size >= MAX_BELIEF_IDS) BELIEF_ID_BYTES.clear();
    bytes = beliefIdField(beliefId);
    BELIEF_ID_BYTES.set(beliefId, bytes);
  }
  return bytes;
}

const UTF8 = new TextEncoder();
const BELIEF_ID_TAG = ((ArmCandidateSchema.field.beliefId!.number << 3) | WireType.LengthDelimited) >>> 0;

/**
 * An ArmCandidate holding only `beliefId`, as toBinary encodes it: the
 * field's tag, the UTF-8 length, the UTF-8 (nothing for an empty id, as for
 * any proto3 default). Written out because a principal's first recalls meet
 * many ids not kept yet: reflective toBinary took 1.5-2.5 µs an id, this
 * about 0.45 µs (microbenchmark), and looking up and encoding ids was 0.08 ms
 * of an in-turn call of the bench's 10k principal over its first 2,000 calls
 * (0.14 ms for the embedded 50k one, profiled). The bytes are compared with
 * toBinary's (pre-encoded.test.ts).
 */
export function beliefIdField(beliefId: string): Uint8Array {
  if (beliefId === "") return new Uint8Array(0);
  const utf8 = UTF8.encode(beliefId);
  const bytes = new Uint8Array(varintSize(BELIEF_ID_TAG) + varintSize(utf8.length) + utf8.length);
  bytes.set(utf8, writeVarint(bytes, writeVarint(bytes, 0, BELIEF_ID_TAG), utf8.length));
  return bytes;
}

function rankBytes(rank: number): Uint8Array {
  const kept = RANK_BYTES[rank];
  if (kept) return kept;
  const bytes = toBinary(ArmCandidateSchema, create(ArmCandidateSchema, { rank }));
  if (rank <= MAX_RANK_KEPT) RANK_BYTES[rank] = bytes;
  return bytes;
}

/** An arm's outcome as its event; `preEncoded` only for a binary client (reply-format.ts). */
export function armResultToProto(o: ArmOutcome, preEncoded: boolean): ArmResult {
  if (!preEncoded) {
    return create(ArmResultSchema, {
      arm: o.arm,
      candidates: o.candidates.map((c, i) => ({ beliefId: c.belief.beliefId, rank: i + 1 })),
      latencyMs: o.latencyMs,
      degraded: o.degraded,
    });
  }
  const message = create(ArmResultSchema, { arm: o.arm, latencyMs: o.latencyMs, degraded: o.degraded });
  message.$unknown = repeatedMessageField(
    CANDIDATES_FIELD,
    o.candidates.map((c, i) => [beliefIdBytes(c.belief.beliefId), rankBytes(i + 1)]),
  );
  return message;
}

import { create, type UnknownField } from "@bufbuild/protobuf";
import { ArmCandidateSchema, ArmResultSchema, type ArmResult } from "../gen/memory/v1/memory_service_pb.js";
import type { ArmOutcome } from "../recall/arms/arm.js";
import { preEncode, withPreEncoded } from "./pre-encoded.js";

/**
 * An in-turn recall streams its arms' candidates, about 83 ArmCandidates in
 * three ArmResults, and reflective toBinary spends much of their time on the
 * belief ids (a string field and a UUID's UTF-8, per candidate per call). A
 * belief id's encoded field never changes, so it is encoded once
 * (pre-encoded.ts) and a candidate sets only its rank: the three events took
 * 0.19 ms to create and serialize, now 0.11 ms (in process, the bench's
 * 10k-belief principal).
 */

/** Belief ids whose field is kept, about 550 bytes each (measured; 11 MiB when full): a few heavy principals' worth. Cleared when full. */
const MAX_BELIEF_IDS = 20_000;
const BELIEF_ID_FIELDS = new Map<string, readonly UnknownField[]>();

function beliefIdField(beliefId: string): readonly UnknownField[] {
  let field = BELIEF_ID_FIELDS.get(beliefId);
  if (!field) {
    if (BELIEF_ID_FIELDS.size >= MAX_BELIEF_IDS) BELIEF_ID_FIELDS.clear();
    field = preEncode(ArmCandidateSchema, create(ArmCandidateSchema, { beliefId }));
    BELIEF_ID_FIELDS.set(beliefId, field);
  }
  return field;
}

/** An arm's outcome as its event; `preEncoded` only for a binary client (reply-format.ts). */
export function armResultToProto(o: ArmOutcome, preEncoded: boolean): ArmResult {
  return create(ArmResultSchema, {
    arm: o.arm,
    candidates: o.candidates.map((c, i) =>
      preEncoded
        ? withPreEncoded(ArmCandidateSchema, { rank: i + 1 }, beliefIdField(c.belief.beliefId))
        : { beliefId: c.belief.beliefId, rank: i + 1 },
    ),
    latencyMs: o.latencyMs,
    degraded: o.degraded,
  });
}

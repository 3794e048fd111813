import type { UnknownField } from "@bufbuild/protobuf";
import type * as domain from "../domain/model.js";
import { RecalledBeliefSchema, type RecalledBelief } from "../gen/memory/v1/types_pb.js";
import { recalledBeliefToProto } from "./convert.js";
import { preEncode, withPreEncoded } from "./pre-encoded.js";

/**
 * A returned item repeats what its belief holds (id, subject, statement,
 * type, lifecycle, band, authority, origin, portability, validity, blocked)
 * beside four fields of the recall itself (carried, score, arms,
 * conflict_with), and reflective toBinary spends about 13 µs on each item: a
 * cold snapshot returns about 40. So the belief's fields are encoded once
 * (pre-encoded.ts) and reused while every one of them is the same, and an
 * item sets only the recall's four. Reused bytes are those of the item's own
 * values, compared field by field: they can never carry another belief's.
 */

/**
 * Items whose belief fields are kept: about 2.3 KB each (a dozen fields, each
 * its own view of the bytes), so about 9 MiB when full; then it starts over.
 * A snapshot's items recur from session to session, an in-turn recall's less.
 */
const MAX_ITEMS = 4_096;

interface Encoded {
  readonly item: domain.RecalledBelief;
  readonly fields: readonly UnknownField[];
}

const ENCODED = new Map<string, Encoded>();

/** The fields that follow the belief (every field but the recall's own four) are the same. */
function sameBeliefFields(a: domain.RecalledBelief, b: domain.RecalledBelief): boolean {
  return (
    a.beliefId === b.beliefId &&
    a.subject === b.subject &&
    a.statement === b.statement &&
    a.beliefType === b.beliefType &&
    a.status === b.status &&
    a.confidenceBand === b.confidenceBand &&
    a.authority === b.authority &&
    a.originScope === b.originScope &&
    a.portability === b.portability &&
    a.validFrom.getTime() === b.validFrom.getTime() &&
    (a.validTo?.getTime() ?? null) === (b.validTo?.getTime() ?? null) &&
    a.blocked === b.blocked
  );
}

/** `b` as its message, for a binary client (reply-format.ts). */
export function preEncodedItem(b: domain.RecalledBelief): RecalledBelief {
  let encoded = ENCODED.get(b.beliefId);
  if (!encoded || !sameBeliefFields(encoded.item, b)) {
    if (ENCODED.size >= MAX_ITEMS) ENCODED.clear();
    // The recall's own fields at their defaults, which toBinary does not write.
    const item: domain.RecalledBelief = { ...b, carried: false, score: 0, arms: [], conflictWith: [] };
    encoded = { item, fields: preEncode(RecalledBeliefSchema, recalledBeliefToProto(item)) };
    ENCODED.set(b.beliefId, encoded);
  }
  return withPreEncoded(RecalledBeliefSchema, { carried: b.carried, score: b.score, arms: b.arms, conflictWith: b.conflictWith }, encoded.fields);
}

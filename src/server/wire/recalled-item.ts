import { toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type * as domain from "../../domain/model.js";
import { RecalledBeliefSchema, RecallResultSchema, type RecallResult } from "../../gen/memory/v1/types_pb.js";
import { recalledBeliefToProto, recallResultToProto } from "./convert.js";
import { repeatedMessageField } from "./repeated-field.js";

/**
 * A returned item repeats what its belief holds (id, subject, statement,
 * type, lifecycle, band, authority, origin, portability, validity, blocked)
 * beside four fields of the recall itself (carried, score, arms,
 * conflict_with), and reflective toBinary spends about 13 µs on each item: a
 * cold snapshot returns about 40. So the belief's fields are encoded once and
 * reused while every one of them is the same; an item writes only the
 * recall's four (recallFieldBytes), and the items field is joined from both
 * (repeated-field.ts).
 * Reused bytes are those of the item's own values, compared field by field:
 * they can never carry another belief's.
 */

/**
 * Items whose belief fields are kept (the item compared against, and its
 * fields' bytes); then it starts over. A snapshot's items recur from session
 * to session, an in-turn recall's less.
 */
const MAX_ITEMS = 4_096;

interface Encoded {
  readonly item: domain.RecalledBelief;
  readonly bytes: Uint8Array;
}

const ENCODED = new Map<string, Encoded>();

/** The recall's own fields; every other field of an item follows its belief. */
type RecallField = "carried" | "score" | "arms" | "conflictWith";

const same = <T>(a: T, b: T) => a === b;
const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * How each belief field is compared. Every field but the recall's four must be
 * here (the type says so): a field added to RecalledBelief fails to compile
 * until it is, so its stale bytes can never be reused.
 */
const BELIEF_FIELDS: { [K in Exclude<keyof domain.RecalledBelief, RecallField>]: (a: domain.RecalledBelief[K], b: domain.RecalledBelief[K]) => boolean } = {
  beliefId: same,
  subject: same,
  statement: same,
  beliefType: same,
  status: same,
  confidenceBand: same,
  authority: same,
  originScope: same,
  portability: same,
  validFrom: sameTime,
  validTo: sameTime,
  blocked: same,
};
const BELIEF_KEYS = Object.keys(BELIEF_FIELDS) as (keyof typeof BELIEF_FIELDS)[];

function sameBeliefFields(a: domain.RecalledBelief, b: domain.RecalledBelief): boolean {
  return BELIEF_KEYS.every((k) => (BELIEF_FIELDS[k] as (x: unknown, y: unknown) => boolean)(a[k], b[k]));
}

const ITEMS_FIELD = RecallResultSchema.field.items!.number;

/** `r` as its message with its items joined from their pre-encoded fields, for a binary client (reply-format.ts). */
export function withPreEncodedItems(r: domain.RecallResult): RecallResult {
  const message = recallResultToProto({ ...r, items: [] });
  message.$unknown = repeatedMessageField(ITEMS_FIELD, r.items.map(itemParts));
  return message;
}

/** An item's encoded fields: the recall's own four, then its belief's (kept). */
function itemParts(b: domain.RecalledBelief): Uint8Array[] {
  let encoded = ENCODED.get(b.beliefId);
  if (!encoded || !sameBeliefFields(encoded.item, b)) {
    if (ENCODED.size >= MAX_ITEMS) ENCODED.clear();
    // The recall's own fields at their defaults, which toBinary does not write.
    const item: domain.RecalledBelief = { ...b, carried: false, score: 0, arms: [], conflictWith: [] };
    encoded = { item, bytes: toBinary(RecalledBeliefSchema, recalledBeliefToProto(item)) };
    ENCODED.set(b.beliefId, encoded);
  }
  return [recallFieldBytes(b), encoded.bytes];
}

const FIELD = RecalledBeliefSchema.field;

/**
 * The recall's four fields of an item, as toBinary writes them (a default
 * value is not written: false, +0, no strings), through the library's wire
 * writer without the reflection: toBinary of a message holding only these
 * was most of a reply's item cost once the belief's fields were kept (about
 * 4.3 µs an item against 1.4; the reply-encoding test compares the two by
 * decoding).
 */
function recallFieldBytes(b: Pick<domain.RecalledBelief, RecallField>): Uint8Array {
  const w = new BinaryWriter();
  if (b.carried) w.tag(FIELD.carried!.number, WireType.Varint).bool(true);
  // toBinary writes -0 (and NaN): only +0 is the default.
  if (!Object.is(b.score, 0)) w.tag(FIELD.score!.number, WireType.Bit64).double(b.score);
  for (const arm of b.arms) w.tag(FIELD.arms!.number, WireType.LengthDelimited).string(arm);
  for (const id of b.conflictWith) w.tag(FIELD.conflictWith!.number, WireType.LengthDelimited).string(id);
  return w.finish();
}

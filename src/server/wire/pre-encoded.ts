import { create, toBinary, type DescMessage, type MessageInitShape, type MessageShape, type UnknownField } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";

/**
 * Fields encoded once, written verbatim on every later reply. protobuf-es v2's
 * toBinary is reflective (about 13 µs per RecalledBelief), and some replies
 * repeat what an earlier one encoded: a cached snapshot's ~10.5 KiB result
 * (cached-result.ts; an arm event's candidates and a result's items are
 * joined from kept bytes the same way, repeated-field.ts). toBinary writes a
 * message's `$unknown` fields as they are (tag, then the bytes), so the
 * stable fields are encoded by toBinary itself, kept as one such entry, and
 * attached to a message that sets only what varies. Nothing here knows a
 * field layout; a decoder reads the same fields, the varying ones first.
 * Only toBinary writes `$unknown`, and only with its default
 * writeUnknownFields (sidecar/start-sidecar.ts passes no binaryOptions): a JSON reply must be
 * a whole message (reply-format.ts).
 */

/**
 * The fields of `message` as toBinary encodes them, as one entry: the first
 * field's tag, and as its data every byte after that tag, the later fields'
 * tags and values included. toBinary writes an entry's tag and then its data
 * verbatim, so the bytes on the wire are the message's own; one entry is one
 * copy into the reply where an entry per field was one per field (its writer
 * turns each into a chunk of its own, joined at the end).
 */
export function preEncode<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): readonly UnknownField[] {
  const bytes = toBinary(schema, message);
  if (bytes.length === 0) return [];
  const reader = new BinaryReader(bytes);
  const [no, wireType] = reader.tag();
  return [{ no, wireType, data: bytes.subarray(reader.pos) }];
}

/**
 * A message with `varying` set and `fields` written after them. The two must
 * not share a field: a repeated one would be written twice, and for a
 * singular one the last written (the pre-encoded) would win.
 */
export function withPreEncoded<Desc extends DescMessage>(
  schema: Desc,
  varying: MessageInitShape<Desc>,
  fields: readonly UnknownField[],
): MessageShape<Desc> {
  const message = create(schema, varying);
  // toBinary only reads the entries; they are shared by every reply built from them.
  message.$unknown = fields as UnknownField[];
  return message;
}

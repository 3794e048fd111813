import type { UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";

/**
 * A repeated message field as one `$unknown` entry (see pre-encoded.ts):
 * every message's encoded bytes behind its own tag and length, in order, in
 * one buffer. toBinary encodes each element of a repeated message field into
 * a writer of its own and copies it into its parent (about 1 µs an element,
 * most of it in the writer's chunk joining); this copies each element's
 * bytes once. A message is given as the byte parts it is made of (for
 * instance its pre-encoded fields, then the fields of this reply): a message
 * is the concatenation of its fields, in any order.
 */
export function repeatedMessageField(no: number, messages: readonly (readonly Uint8Array[])[]): UnknownField[] {
  if (messages.length === 0) return [];
  const tag = ((no << 3) | WireType.LengthDelimited) >>> 0; // unsigned: field numbers reach 2^29
  const tagSize = varintSize(tag);
  let size = 0;
  for (const parts of messages) {
    const length = partsLength(parts);
    size += tagSize + varintSize(length) + length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const parts of messages) {
    at = writeVarint(bytes, at, tag);
    at = writeVarint(bytes, at, partsLength(parts));
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
  }
  // toBinary writes the entry's tag, then its data: the first element's tag is the entry's own.
  return [{ no, wireType: WireType.LengthDelimited, data: bytes.subarray(tagSize) }];
}

function partsLength(parts: readonly Uint8Array[]): number {
  let length = 0;
  for (const part of parts) length += part.length;
  return length;
}

/** The bytes of `value` as an unsigned varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value > 0x7f) {
    value >>>= 7;
    size += 1;
  }
  return size;
}

/** An unsigned 32-bit varint at `at`; returns the offset after it. */
export function writeVarint(bytes: Uint8Array, at: number, value: number): number {
  while (value > 0x7f) {
    bytes[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  bytes[at++] = value;
  return at;
}

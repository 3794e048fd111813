/**
 * Many strings in one UTF-8 buffer, each by a slot number: one object for
 * all of an index's statements, where a string per belief was one more
 * object for every full collection to mark. A string is decoded when it is
 * read (a belief rendered or tested by a pattern), not kept decoded.
 * Append-only: a slot replaced by a newer row's statement leaves its bytes
 * behind (counted in `bytes`) until the index is rebuilt; deltas are small
 * next to a load.
 */
export class PackedStrings {
  private buffer = new Uint8Array(0);
  private used = 0;
  /** Slot i spans [starts[i], starts[i] + lengths[i]) of the buffer. */
  private starts = new Uint32Array(0);
  private lengths = new Uint32Array(0);
  private slots = 0;

  /** Stores `value`, returning its slot. */
  add(value: string): number {
    // A UTF-16 unit takes at most 3 bytes of UTF-8.
    this.reserve(this.used + value.length * 3);
    const { written } = ENCODER.encodeInto(value, this.buffer.subarray(this.used));
    if (this.slots === this.starts.length) {
      const capacity = Math.max(1024, this.slots * 2);
      this.starts = grownTo(this.starts, new Uint32Array(capacity));
      this.lengths = grownTo(this.lengths, new Uint32Array(capacity));
    }
    this.starts[this.slots] = this.used;
    this.lengths[this.slots] = written;
    this.used += written;
    return this.slots++;
  }

  get(slot: number): string {
    const start = this.starts[slot]!;
    return DECODER.decode(this.buffer.subarray(start, start + this.lengths[slot]!));
  }

  /** Bytes the buffers hold (their capacity: what the process pays). */
  get bytes(): number {
    return this.buffer.byteLength + this.starts.byteLength + this.lengths.byteLength;
  }

  private reserve(min: number): void {
    if (min <= this.buffer.length) return;
    // Grows by half, not double: a 100k principal's statements are several MiB.
    this.buffer = grownTo(this.buffer.subarray(0, this.used), new Uint8Array(Math.max(min, Math.floor(this.buffer.length * 1.5), 64 * 1024)));
  }
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

function grownTo<T extends Uint8Array | Uint32Array>(old: T, next: T): T {
  next.set(old as never);
  return next;
}

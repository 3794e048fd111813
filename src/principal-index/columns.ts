import type { IndexedBelief } from "./loading.js";

/**
 * What the hard filter reads of each belief, one typed array per field,
 * indexed by the belief's ordinal in its principal's index
 * (IndexedBelief.ord). The lexical arm judges hundreds of beliefs per recall
 * (a common word matches thousands); read from belief objects spread over
 * the heap, each judgement cost several cache misses, about 0.2 ms of a 10k
 * principal's recall. Read from these arrays it is a few array reads.
 * Strings are interned as small integers (Interner), so a comparison of two
 * scopes or subjects is a comparison of two numbers.
 */
export class BeliefColumns {
  private capacity = 0;
  sensitivity = new Uint8Array(0);
  status = new Int32Array(0);
  beliefType = new Int32Array(0);
  /** portability === "local". */
  local = new Uint8Array(0);
  originScope = new Int32Array(0);
  subject = new Int32Array(0);
  /** Epoch ms; a missing end (valid_to, retracted_at, expires_hint) is +∞. */
  validFrom = new Float64Array(0);
  validTo = new Float64Array(0);
  recordedAt = new Float64Array(0);
  retractedAt = new Float64Array(0);
  expiresHint = new Float64Array(0);
  /** Earliest "not true" rejection in epoch µs; +∞ when none. */
  notTrueSinceUs = new Float64Array(0);
  /** The belief's persona entry stands (the snapshot excludes it). */
  personaHeld = new Uint8Array(0);
  /** Some belief names this one in its supersedes (or once did): the successor check must look. */
  mayBeSuperseded = new Uint8Array(0);
  /** The belief id's first 12 hex digits as a number: ids in this order are in uuid order (see compareIdsAt). */
  idPrefix = new Float64Array(0);

  readonly statuses = new Interner();
  readonly types = new Interner();
  readonly scopes = new Interner();
  readonly subjects = new Interner();

  /** Writes belief `ib`'s fields at its ordinal. */
  set(ib: IndexedBelief, personaHeld: boolean, mayBeSuperseded: boolean): void {
    const o = ib.ord;
    if (o >= this.capacity) this.grow(o + 1);
    const b = ib.belief;
    this.sensitivity[o] = b.sensitivity;
    this.status[o] = this.statuses.id(b.status);
    this.beliefType[o] = this.types.id(b.beliefType);
    this.local[o] = b.portability === "local" ? 1 : 0;
    this.originScope[o] = this.scopes.id(b.originScope);
    this.subject[o] = this.subjects.id(ib.subjectKey);
    this.validFrom[o] = b.validFrom.getTime();
    this.validTo[o] = endMs(b.validTo);
    this.recordedAt[o] = b.recordedAt.getTime();
    this.retractedAt[o] = endMs(b.retractedAt);
    this.expiresHint[o] = endMs(b.expiresHint);
    this.notTrueSinceUs[o] = ib.notTrueSinceUs ?? Infinity;
    this.personaHeld[o] = personaHeld ? 1 : 0;
    this.mayBeSuperseded[o] = mayBeSuperseded ? 1 : 0;
    this.idPrefix[o] = uuidPrefix(b.beliefId);
  }

  /** Bytes the arrays hold, for the index's byte bound. */
  get bytes(): number {
    return this.capacity * BYTES_PER_BELIEF;
  }

  private grow(min: number): void {
    const capacity = Math.max(min, this.capacity * 2, 1024);
    this.sensitivity = grown(this.sensitivity, new Uint8Array(capacity));
    this.status = grown(this.status, new Int32Array(capacity));
    this.beliefType = grown(this.beliefType, new Int32Array(capacity));
    this.local = grown(this.local, new Uint8Array(capacity));
    this.originScope = grown(this.originScope, new Int32Array(capacity));
    this.subject = grown(this.subject, new Int32Array(capacity));
    this.validFrom = grown(this.validFrom, new Float64Array(capacity));
    this.validTo = grown(this.validTo, new Float64Array(capacity));
    this.recordedAt = grown(this.recordedAt, new Float64Array(capacity));
    this.retractedAt = grown(this.retractedAt, new Float64Array(capacity));
    this.expiresHint = grown(this.expiresHint, new Float64Array(capacity));
    this.notTrueSinceUs = grown(this.notTrueSinceUs, new Float64Array(capacity));
    this.personaHeld = grown(this.personaHeld, new Uint8Array(capacity));
    this.mayBeSuperseded = grown(this.mayBeSuperseded, new Uint8Array(capacity));
    this.idPrefix = grown(this.idPrefix, new Float64Array(capacity));
    this.capacity = capacity;
  }
}

/** An end time in epoch ms; a missing end is +∞. */
function endMs(d: Date | null): number {
  return d === null ? Infinity : d.getTime();
}

/** 4 one-byte, 4 four-byte and 7 eight-byte columns. */
const BYTES_PER_BELIEF = 4 + 4 * 4 + 7 * 8;

/**
 * A uuid's first 12 hex digits (48 bits, exact in a double). PostgreSQL
 * orders uuids as their lower-case hex text, so a smaller prefix is a
 * smaller id; equal prefixes (one pair in billions) need the full ids.
 */
export function uuidPrefix(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

function grown<T extends Uint8Array | Int32Array | Float64Array>(old: T, next: T): T {
  next.set(old as never);
  return next;
}

/** Strings as small integers, each the same integer for the life of the index. */
export class Interner {
  private readonly ids = new Map<string, number>();
  private readonly values: string[] = [];

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      this.ids.set(value, (id = this.ids.size));
      this.values.push(value);
    }
    return id;
  }

  /** The string of an integer `id` gave. */
  value(id: number): string {
    return this.values[id]!;
  }

  /** The integer of a string already seen, or -1 (no belief has it). */
  find(value: string): number {
    return this.ids.get(value) ?? -1;
  }

  get size(): number {
    return this.ids.size;
  }
}

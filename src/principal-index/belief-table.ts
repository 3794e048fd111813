import type { Authority, BeliefStatus, Portability, ScopeLevel, SensitivityLevel, StoredBelief } from "../domain/model.js";
import { BeliefColumns, Interner } from "./columns.js";
import type { IndexedBelief } from "./loading.js";
import { PackedStrings } from "./packed-strings.js";
import type { TsEntry } from "./tsvector.js";

/**
 * Every belief of a principal index as columns, by ordinal: no object per
 * belief. The hard filter's columns (BeliefColumns) plus everything else a
 * row holds: numbers and times in typed arrays, repeated strings interned
 * as small integers, statements in one packed buffer, lexical documents as
 * runs of interned (lexeme, labels) entries in one Int32Array, and the rare
 * id lists (supersedes, conflicts, source episodes) in a map of the rows
 * that have any. A row is turned back into a StoredBelief (`belief`) only
 * when an arm returns it as a candidate.
 *
 * A replaced row keeps its ordinal; its old statement bytes and lexical
 * run stay behind in the packed buffers (counted in `bytes`) until the
 * index is rebuilt.
 */
export class BeliefTable {
  /** What the hard filter reads (eligibility.ts), and the interned status, type, scope and subject key. */
  readonly filter = new BeliefColumns();
  private capacity = 0;
  /** Rows held: ordinals 0 … size - 1. */
  size = 0;

  /** The belief id of each ordinal: the one string kept per row (the index looks rows up by it). */
  private readonly ids: string[] = [];
  private readonly statements = new PackedStrings();
  private statementSlot = new Uint32Array(0);
  private readonly subjectNames = new Interner();
  private subjectName = new Int32Array(0);
  private readonly predicates = new Interner();
  private predicate = new Int32Array(0);
  private readonly authorities = new Interner();
  private authority = new Uint8Array(0);
  private readonly scopeLevels = new Interner();
  private scopeLevel = new Uint8Array(0);
  private readonly portabilities = new Interner();
  private portability = new Uint8Array(0);
  private flagged = new Uint8Array(0);
  private evidenceCount = new Int32Array(0);
  private confidence = new Float64Array(0);
  private utility = new Float64Array(0);
  private storePosition = new Float64Array(0);
  /** Epoch ms; NaN where the row has none. */
  private lastEvidenceAt = new Float64Array(0);
  private lastUsedAt = new Float64Array(0);
  private lastRejectedAt = new Float64Array(0);
  /** lex_lengths, four per row (labels A-D). */
  private lengths = new Int32Array(0);
  /** The row's lexical document: entries termRun[termStart[o] … termStart[o] + termCount[o]) of `terms`. */
  private termStart = new Uint32Array(0);
  private termCount = new Uint16Array(0);
  private termRun = new Int32Array(0);
  private termRunUsed = 0;
  /** Interned (lexeme, labels) pairs: a row's document is a run of their numbers. */
  private readonly termEntries: TsEntry[] = [];
  private readonly termIds = new Map<string, number>();
  /** The structured arm's authority order (ordered-beliefs.ts writes it). */
  rank = new Int32Array(0);
  /** supersedes, conflicts_with and source_episode_ids of the rows that have any. */
  private readonly lists = new Map<number, RowLists>();
  /** One copy of each string recall keeps from a row (a memo's words, its lower-cased subject). */
  private readonly sharedStrings = new Map<string, string>();

  /** Writes `row` at ordinal `o` (a new row at `size`, or a replacement). */
  set(o: number, row: IndexedBelief, personaHeld: boolean, mayBeSuperseded: boolean): void {
    if (o >= this.capacity) this.grow(o + 1);
    if (o >= this.size) this.size = o + 1;
    const b = row.belief;
    row.ord = o;
    this.filter.set(row, personaHeld, mayBeSuperseded);
    this.ids[o] = b.beliefId;
    this.statementSlot[o] = this.statements.add(b.statement);
    this.subjectName[o] = this.subjectNames.id(b.subject);
    this.predicate[o] = this.predicates.id(b.predicateKey);
    this.authority[o] = this.authorities.id(b.authority);
    this.scopeLevel[o] = this.scopeLevels.id(b.scopeLevel);
    this.portability[o] = this.portabilities.id(b.portability);
    this.flagged[o] = b.flaggedForReview ? 1 : 0;
    this.evidenceCount[o] = b.evidenceCount;
    this.confidence[o] = b.confidence;
    this.utility[o] = b.utility;
    this.storePosition[o] = b.storePosition;
    this.lastEvidenceAt[o] = b.lastEvidenceAt.getTime();
    this.lastUsedAt[o] = b.lastUsedAt?.getTime() ?? NaN;
    this.lastRejectedAt[o] = row.lastRejectedAt?.getTime() ?? NaN;
    this.lengths.set(row.lengths, o * 4);
    this.setTerms(o, row.terms);
    if (b.supersedes.length + b.conflictsWith.length + b.sourceEpisodeIds.length > 0) {
      this.lists.set(o, { supersedes: b.supersedes, conflictsWith: b.conflictsWith, sourceEpisodeIds: b.sourceEpisodeIds });
    } else this.lists.delete(o);
  }

  id(o: number): string {
    return this.ids[o]!;
  }

  statement(o: number): string {
    return this.statements.get(this.statementSlot[o]!);
  }

  subjectKey(o: number): string {
    return this.filter.subjects.value(this.filter.subject[o]!);
  }

  beliefType(o: number): string {
    return this.filter.types.value(this.filter.beliefType[o]!);
  }

  position(o: number): number {
    return this.storePosition[o]!;
  }

  /** The structured arm's order reads these (one-principal-index.ts authorityFirst). */
  authorityOf(o: number): Authority {
    return this.authorities.value(this.authority[o]!) as Authority;
  }

  confidenceOf(o: number): number {
    return this.confidence[o]!;
  }

  evidenceOf(o: number): number {
    return this.evidenceCount[o]!;
  }

  supersedes(o: number): readonly string[] {
    return this.lists.get(o)?.supersedes ?? NONE;
  }

  lastRejected(o: number): Date | null {
    return dateOrNull(this.lastRejectedAt[o]!);
  }

  /** The weighted lengths' parts: lex_lengths[label] of row `o`. */
  length(o: number, label: number): number {
    return this.lengths[o * 4 + label]!;
  }

  /** Calls `each` with the lexeme and labels of every entry of row `o`'s lexical document, in tsvector order. */
  eachTerm(o: number, each: (lexeme: string, labels: string) => void): void {
    const start = this.termStart[o]!;
    const end = start + this.termCount[o]!;
    for (let i = start; i < end; i++) {
      const t = this.termEntries[this.termRun[i]!]!;
      each(t.lexeme, t.labels);
    }
  }

  /** The row as the store reads it: a new object each call (the index keeps the recently returned ones). */
  belief(o: number): StoredBelief {
    const c = this.filter;
    const lists = this.lists.get(o);
    return {
      beliefId: this.ids[o]!,
      subject: this.subjectNames.value(this.subjectName[o]!),
      statement: this.statement(o),
      beliefType: c.types.value(c.beliefType[o]!),
      predicateKey: this.predicates.value(this.predicate[o]!),
      status: c.statuses.value(c.status[o]!) as BeliefStatus,
      confidence: this.confidence[o]!,
      authority: this.authorities.value(this.authority[o]!) as Authority,
      originScope: c.scopes.value(c.originScope[o]!),
      scopeLevel: this.scopeLevels.value(this.scopeLevel[o]!) as ScopeLevel,
      portability: this.portabilities.value(this.portability[o]!) as Portability,
      sensitivity: c.sensitivity[o]! as SensitivityLevel,
      validFrom: new Date(c.validFrom[o]!),
      validTo: endOrNull(c.validTo[o]!),
      recordedAt: new Date(c.recordedAt[o]!),
      retractedAt: endOrNull(c.retractedAt[o]!),
      supersedes: lists?.supersedes ?? NONE,
      conflictsWith: lists?.conflictsWith ?? NONE,
      evidenceCount: this.evidenceCount[o]!,
      lastEvidenceAt: new Date(this.lastEvidenceAt[o]!),
      expiresHint: endOrNull(c.expiresHint[o]!),
      flaggedForReview: this.flagged[o] === 1,
      sourceEpisodeIds: lists?.sourceEpisodeIds ?? NONE,
      utility: this.utility[o]!,
      lastUsedAt: dateOrNull(this.lastUsedAt[o]!),
      storePosition: this.storePosition[o]!,
    };
  }

  /** `value`, as the one copy this table keeps of strings equal to it (for what recall keeps of a row). */
  readonly shared = (value: string): string => {
    const known = this.sharedStrings.get(value);
    if (known !== undefined) return known;
    this.sharedStrings.set(value, value);
    return value;
  };

  /** Bytes held, for RECALL_INDEX_MB: the columns' capacity, the packed buffers, and estimates for the strings and maps. */
  get bytes(): number {
    return (
      this.filter.bytes +
      this.capacity * BYTES_PER_ROW +
      this.statements.bytes +
      this.termRun.byteLength +
      this.size * ID_BYTES +
      this.lists.size * LISTS_BYTES +
      (this.termEntries.length + this.sharedStrings.size + this.subjectNames.size + this.predicates.size) * ENTRY_BYTES
    );
  }

  private setTerms(o: number, terms: readonly TsEntry[]): void {
    if (this.termRunUsed + terms.length > this.termRun.length) {
      const next = new Int32Array(Math.max(this.termRunUsed + terms.length, Math.floor(this.termRun.length * 1.5), 16 * 1024));
      next.set(this.termRun.subarray(0, this.termRunUsed));
      this.termRun = next;
    }
    this.termStart[o] = this.termRunUsed;
    this.termCount[o] = Math.min(terms.length, 0xffff);
    for (const t of terms.slice(0, 0xffff)) this.termRun[this.termRunUsed++] = this.termId(t);
  }

  private termId(t: TsEntry): number {
    const key = `${t.lexeme}\u0000${t.labels}`;
    let id = this.termIds.get(key);
    if (id === undefined) {
      id = this.termEntries.length;
      this.termEntries.push({ lexeme: this.shared(t.lexeme), labels: this.shared(t.labels) });
      this.termIds.set(key, id);
    }
    return id;
  }

  private grow(min: number): void {
    const capacity = Math.max(min, Math.floor(this.capacity * 1.5), 1024);
    const g = <T extends TypedArray>(old: T, make: (n: number) => T, per = 1): T => {
      const next = make(capacity * per);
      next.set(old as never);
      return next;
    };
    this.statementSlot = g(this.statementSlot, (n) => new Uint32Array(n));
    this.subjectName = g(this.subjectName, (n) => new Int32Array(n));
    this.predicate = g(this.predicate, (n) => new Int32Array(n));
    this.authority = g(this.authority, (n) => new Uint8Array(n));
    this.scopeLevel = g(this.scopeLevel, (n) => new Uint8Array(n));
    this.portability = g(this.portability, (n) => new Uint8Array(n));
    this.flagged = g(this.flagged, (n) => new Uint8Array(n));
    this.evidenceCount = g(this.evidenceCount, (n) => new Int32Array(n));
    this.confidence = g(this.confidence, (n) => new Float64Array(n));
    this.utility = g(this.utility, (n) => new Float64Array(n));
    this.storePosition = g(this.storePosition, (n) => new Float64Array(n));
    this.lastEvidenceAt = g(this.lastEvidenceAt, (n) => new Float64Array(n));
    this.lastUsedAt = g(this.lastUsedAt, (n) => new Float64Array(n));
    this.lastRejectedAt = g(this.lastRejectedAt, (n) => new Float64Array(n));
    this.lengths = g(this.lengths, (n) => new Int32Array(n), 4);
    this.termStart = g(this.termStart, (n) => new Uint32Array(n));
    this.termCount = g(this.termCount, (n) => new Uint16Array(n));
    this.rank = g(this.rank, (n) => new Int32Array(n));
    this.capacity = capacity;
  }
}

type TypedArray = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float64Array;

interface RowLists {
  supersedes: string[];
  conflictsWith: string[];
  sourceEpisodeIds: string[];
}

/** The empty list rows without one share; frozen, so a change in place fails loudly instead of reaching every row. */
const NONE = Object.freeze([]) as unknown as string[];

/** Bytes per row of this table's own columns (BeliefColumns counts its own). */
const BYTES_PER_ROW = 4 + 4 + 4 + 1 + 1 + 1 + 1 + 4 + 8 * 6 + 16 + 4 + 2 + 4;
/** A belief id string and its slots (the ids array, the index's id map). */
const ID_BYTES = 36 + 24 + 8 + 40;
const LISTS_BYTES = 200;
/** An interned string or entry and its map slot. */
const ENTRY_BYTES = 100;

function dateOrNull(ms: number): Date | null {
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** An end time the filter columns keep as +∞ when missing. */
function endOrNull(ms: number): Date | null {
  return ms === Infinity ? null : new Date(ms);
}

import type { StoredBelief } from "../domain/model.js";
import type { IndexedBelief } from "./loading.js";
import type { TsEntry } from "./tsvector.js";

/**
 * One copy of each repeated value an index holds. The driver hands every row
 * a fresh string for every field, and the tsvector parser a fresh object for
 * each lexeme of each row; a 10k principal's index held about 190k strings,
 * mostly the same few thousand values ("active", "user", the weight label
 * "AB", the lexeme "prefer" once per row holding it). Each is an object V8's
 * full collection marks again and again while the sidecar runs, so the
 * index's object count, more than its bytes, sets what a full collection
 * costs every call that meets it. Interned, a row shares them, and the
 * rows without a predecessor, conflict or source episode share one empty
 * list, as rows with the same lex_lengths share one lengths array. A row's
 * memo takes the words it keeps from here too (ports/row-memo.ts).
 *
 * One vocabulary per principal index, dropped with it: nothing is shared
 * between principals. It only grows (a value no longer held stays until the
 * index is rebuilt), by the principal's distinct values.
 */
export class Vocabulary {
  private readonly strings = new Map<string, string>();
  /** lexeme → labels → the entry. */
  private readonly entries = new Map<string, Map<string, TsEntry>>();
  /** A row's lex_lengths by their text ("3,12,0,0"). */
  private readonly lengthLists = new Map<string, IndexedBelief["lengths"]>();
  /** Approximate heap held, for the index's byte bound. */
  bytes = 0;

  /** `row` with its repeated values replaced by this vocabulary's copies (in place: the index owns the row). */
  intern(row: IndexedBelief): void {
    const b: StoredBelief = row.belief;
    b.subject = this.string(b.subject);
    b.beliefType = this.string(b.beliefType);
    b.predicateKey = this.string(b.predicateKey);
    b.status = this.string(b.status) as StoredBelief["status"];
    b.authority = this.string(b.authority) as StoredBelief["authority"];
    b.originScope = this.string(b.originScope);
    b.scopeLevel = this.string(b.scopeLevel) as StoredBelief["scopeLevel"];
    b.portability = this.string(b.portability) as StoredBelief["portability"];
    row.subjectKey = this.string(row.subjectKey);
    // Most rows name no predecessor, conflict or source episode: they share one empty list.
    if (b.supersedes.length === 0) b.supersedes = NONE;
    if (b.conflictsWith.length === 0) b.conflictsWith = NONE;
    if (b.sourceEpisodeIds.length === 0) b.sourceEpisodeIds = NONE;
    row.lengths = this.lengths(row.lengths);
    const terms = row.terms;
    for (let i = 0; i < terms.length; i++) terms[i] = this.entry(terms[i]!);
    // What recall keeps in the row's memo takes its strings from here too: its content words
    // (through `shared`) and its lower-cased subject (JavaScript's lower case, as the memo's;
    // for most subjects the same string as the subject key).
    row.memo.shared = this.shared;
    row.memo.lowerSubject ??= this.string(b.subject.toLowerCase());
  }

  /** `string`, as a function a memo can hold. */
  private readonly shared = (value: string): string => this.string(value);

  private lengths(value: IndexedBelief["lengths"]): IndexedBelief["lengths"] {
    const key = value.join(",");
    const known = this.lengthLists.get(key);
    if (known) return known;
    this.lengthLists.set(key, value);
    this.bytes += LENGTHS_BYTES;
    return value;
  }

  private string(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    this.strings.set(value, value);
    this.bytes += value.length * 2 + STRING_OVERHEAD;
    return value;
  }

  private entry(t: TsEntry): TsEntry {
    let byLabels = this.entries.get(t.lexeme);
    if (!byLabels) this.entries.set(t.lexeme, (byLabels = new Map()));
    const known = byLabels.get(t.labels);
    if (known) return known;
    const entry: TsEntry = { lexeme: this.string(t.lexeme), labels: this.string(t.labels) };
    byLabels.set(entry.labels, entry);
    this.bytes += ENTRY_BYTES;
    return entry;
  }
}

/**
 * The empty list every row without one shares. Frozen: the rows are read,
 * never changed in place, and a change would now fail loudly rather than
 * reach every row.
 */
const NONE = Object.freeze([]) as unknown as string[];

/** A string's header and its slot in the table. */
const STRING_OVERHEAD = 60;
/** An entry object and its slot in the table. */
const ENTRY_BYTES = 100;
/** A lengths array, its key and its slot. */
const LENGTHS_BYTES = 140;

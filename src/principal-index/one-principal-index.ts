import type { Correction, Principal, StoredBelief } from "../domain/model.js";
import {
  AUTHORITY_ORDER,
  type ArmCandidate,
  type CandidateSource,
  type LexicalQuery,
  type NamedSubjects,
  type ReadOptions,
  type SemanticQuery,
  type StructuredAnchors,
} from "../ports/candidate-source.js";
import type { EligibilityFilter } from "../domain/hard-filter.js";
import { BeliefTable } from "./belief-table.js";
import { eligibilityTest, successorInForce } from "./eligibility.js";
import { firstK } from "./first-k.js";
import { HOT_ROW_BYTES, HOT_ROWS, HotRows } from "./hot-rows.js";
import { compareIds, lexicalScores, ScoringScratch } from "./lexical-scoring.js";
import type { IndexedBelief, SideTables, VectorsOf } from "./loading.js";
import { OrderedBeliefs } from "./ordered-beliefs.js";
import { OrdLists } from "./ord-lists.js";
import { Postings } from "./postings.js";
import { similarity } from "./trigram.js";
import { VectorSlab } from "./vector-slab.js";
import { VerdictMemo } from "./verdict-memo.js";

/** What the index asks of the store it cannot hold: lexemes of non-ASCII terms. */
export interface IndexLookups {
  lexemes(terms: readonly string[], options?: ReadOptions): Promise<string[]>;
}

/** The ownership patterns (ports/candidate-source.ts) as JavaScript regular expressions; \M is "end of word". */
const OWNERSHIP = /^\s*(the\s+)?user\s+(has|owns|drives|uses)(?![\p{L}\p{N}_])/iu;
const NOT_OWNERSHIP = /^\s*(the\s+)?user\s+has\s+(not|never|no|had|owned|used|driven|sold)(?![\p{L}\p{N}_])/iu;

/**
 * One principal's memory in process, answering the candidate-source port
 * exactly as the SQL arms do. It holds that principal's rows only and
 * refuses a filter for anyone else, so a call reaches only the index of its
 * own identity. `position` is the store head its contents reflect.
 *
 * Rows are held as columns by ordinal (belief-table.ts), and every lookup
 * structure holds ordinals, not objects: a row becomes a StoredBelief only
 * when an arm returns it (hot-rows.ts keeps the recent ones).
 */
export class PrincipalIndex implements CandidateSource {
  position: number;
  private readonly table = new BeliefTable();
  /** Belief id → ordinal. A row's ordinal never changes; rows are replaced, never removed (an erasure rebuilds the index). */
  private readonly ords = new Map<string, number>();
  private readonly hot = new HotRows(this.table);
  private readonly scratch = new ScoringScratch();
  private readonly verdicts = new VerdictMemo();
  private readonly postings = new Postings();
  /** Ordinals by interned subject key and by interned type (the filter columns' numbers). */
  private readonly bySubject = new OrdLists<number>();
  private readonly byType = new OrdLists<number>();
  /** Sorted distinct subject keys, for the misspelt-name prefix search; rebuilt lazily. */
  private subjectKeys: string[] | null = null;
  /** The delta arm's order: newest store position first. */
  private readonly byPosition = new OrderedBeliefs(() => this.table.size, (x, y) => this.newestFirst(x, y));
  /** The structured arm's order among beliefs of equal arm score: authority, confidence, evidence, id. */
  private readonly byAuthority = new OrderedBeliefs(() => this.table.size, (x, y) => this.authorityFirst(x, y));
  /** Old belief id → beliefs naming it in their supersedes. */
  private readonly successors = new Map<string, Set<string>>();
  private persona: ReadonlySet<string> = new Set();
  private aliases: ReadonlyMap<string, string> = new Map();
  private aliasesBySubject = new Map<string, string[]>();
  /** The semantic arm's vectors, of embedder `vectorsOf`; null with the arm off (no bytes, none read). */
  private readonly vectors: VectorSlab | null;

  constructor(
    readonly principal: Principal,
    side: SideTables,
    beliefs: readonly IndexedBelief[],
    private readonly lookups: IndexLookups,
    readonly vectorsOf: VectorsOf = null,
  ) {
    this.vectors = vectorsOf === null ? null : new VectorSlab();
    this.position = side.position;
    this.setSideTables(side);
    this.upsert(beliefs);
  }

  /** What the safety prescan reads of every row held (made on demand: the index keeps no row objects). */
  scanItems(): { statement: string; beliefType: string }[] {
    return Array.from({ length: this.table.size }, (_, o) => ({ statement: this.table.statement(o), beliefType: this.table.beliefType(o) }));
  }

  get size(): number {
    return this.table.size;
  }

  /** Approximate bytes held, for RECALL_INDEX_MB. */
  get bytes(): number {
    return (
      this.table.bytes +
      this.postings.bytes +
      this.bySubject.bytes +
      this.byType.bytes +
      // The two orders (arrays of numbers, 8 bytes an entry, and one Int32Array) and the hot rows when full.
      this.table.size * 20 +
      Math.min(this.table.size, HOT_ROWS) * HOT_ROW_BYTES +
      (this.persona.size + this.aliases.size + this.successors.size) * 120 +
      this.vectorBytes +
      4096
    );
  }

  /** Bytes of the semantic arm's vectors (part of `bytes`): about dim + 4 per row. */
  get vectorBytes(): number {
    return this.vectors?.bytes ?? 0;
  }

  /** Rows holding a current vector. */
  get vectorRows(): number {
    return this.vectors?.held ?? 0;
  }

  /** After a load: the vectors' spare capacity goes. */
  fitVectors(): void {
    this.vectors?.fit(this.table.size);
  }

  /** Replaces rows by id (a delta, or the rows feedback changed). */
  upsert(rows: readonly IndexedBelief[]): void {
    const t = this.table;
    const c = t.filter;
    for (const next of rows) {
      const id = next.belief.beliefId;
      const old = this.ords.get(id);
      if (old !== undefined) this.unlink(old);
      const o = old ?? t.size;
      t.set(o, next, this.persona.has(id), this.successors.has(id));
      this.ords.set(id, o);
      this.hot.forget(o);
      this.verdicts.forget([o]);
      this.byPosition.place(o, old !== undefined, rows.length);
      this.byAuthority.place(o, old !== undefined, rows.length);
      this.postings.add(o, next.terms, next.lengths);
      // Read with the row: a changed document comes without a vector until it is embedded again.
      this.vectors?.set(o, next.vector);
      if (!this.bySubject.has(c.subject[o]!)) this.subjectKeys = null;
      this.bySubject.add(c.subject[o]!, o);
      this.byType.add(c.beliefType[o]!, o);
      for (const oldId of next.belief.supersedes) {
        let set = this.successors.get(oldId);
        if (!set) this.successors.set(oldId, (set = new Set()));
        set.add(id);
        const replaced = this.ords.get(oldId);
        if (replaced !== undefined) {
          c.mayBeSuperseded[replaced] = 1;
          this.verdicts.forget([replaced]);
        }
      }
    }
  }

  setSideTables(side: SideTables): void {
    this.persona = side.persona;
    this.verdicts.clear();
    const c = this.table.filter;
    c.personaHeld.fill(0);
    for (const id of side.persona) {
      const held = this.ords.get(id);
      if (held !== undefined) c.personaHeld[held] = 1;
    }
    this.aliases = side.aliases;
    const bySubject = new Map<string, string[]>();
    for (const [key, subject] of side.aliases) bySubject.set(subject, [...(bySubject.get(subject) ?? []), key]);
    this.aliasesBySubject = bySubject;
  }

  /** Takes row `o`, about to be replaced, out of every lookup structure (read from the table before it is overwritten). */
  private unlink(o: number): void {
    const t = this.table;
    const c = t.filter;
    this.postings.remove(o, t);
    this.bySubject.remove(c.subject[o]!, o);
    if (!this.bySubject.has(c.subject[o]!)) this.subjectKeys = null;
    this.byType.remove(c.beliefType[o]!, o);
    for (const oldId of t.supersedes(o)) this.successors.get(oldId)?.delete(t.id(o));
  }

  private own(p: Principal): void {
    if (p.tenantId !== this.principal.tenantId || p.principalId !== this.principal.principalId) {
      throw new Error("principal index: asked for another principal's memory");
    }
  }

  /**
   * The hard filter over the columns, by ordinal. Use it before the next
   * await: a delta applied meanwhile may intern new values or grow the columns.
   */
  private eligibleOrd(f: EligibilityFilter): (ord: number) => boolean {
    this.own(f.principal);
    const t = this.table;
    const idOf = (o: number) => t.id(o);
    return eligibilityTest(f, t.filter, (o) => this.successorsOf(idOf(o)), idOf, this.verdicts.forFilter(f, t.size));
  }

  async expandSubjectsEach(p: Principal, subjects: readonly string[]): Promise<Map<string, string[]>> {
    this.own(p);
    const groups = new Map<string, string[]>();
    for (const requested of new Set(subjects.map((s) => s.toLowerCase()))) {
      const canonical = new Set([requested]);
      const target = this.aliases.get(requested);
      if (target !== undefined) canonical.add(target);
      const names = new Set(canonical);
      for (const c of canonical) for (const key of this.aliasesBySubject.get(c) ?? []) names.add(key);
      groups.set(requested, [...names].sort());
    }
    return groups;
  }

  async structuredCandidates(f: EligibilityFilter, anchors: StructuredAnchors, cap: number): Promise<ArmCandidate[]> {
    const eligible = this.eligibleOrd(f);
    const t = this.table;
    const c = t.filter;
    // Anchors as the columns' interned numbers (-1, held by no belief, matches none).
    const subjectIds = new Set(anchors.subjects.map((s) => c.subjects.find(s)));
    const typeIds = new Set(anchors.types.map((x) => c.types.find(x)));
    const owned = anchors.owned ?? null;
    const ownedTypeIds = owned === null ? null : new Set(owned.types.map((x) => c.types.find(x)));
    const anchored = anchors.subjects.length > 0 || anchors.types.length > 0 || owned !== null;
    const score = (o: number) => {
      const subject = subjectIds.has(c.subject[o]!);
      const type = typeIds.has(c.beliefType[o]!);
      const ownership = ownedTypeIds !== null && ownedTypeIds.has(c.beliefType[o]!) && isOwnership(t.statement(o));
      return anchored && !subject && !type && !ownership ? 0 : Math.max(subject ? 1 : 0, ownership ? owned!.weight : 0, type ? anchors.typeWeight : 0);
    };
    this.byAuthority.ranked(t.rank);
    const rank = t.rank;
    const matches: { o: number; armScore: number }[] = [];
    const add = (o: number) => {
      if (!eligible(o)) return false;
      const armScore = score(o);
      if (anchored && armScore === 0) return false;
      matches.push({ o, armScore });
      return true;
    };
    if (owned === null && typeIds.size > 0) {
      // A type anchor matches thousands (a snapshot's durable types), all with the same score: only
      // the first `cap` of them in authority order can make the cut, so they are read in that order.
      for (const s of subjectIds) for (const o of this.bySubject.get(s) ?? []) add(o);
      const order = this.byAuthority.ordinals();
      let typed = 0;
      for (let i = 0; i < order.length && typed < cap; i++) {
        const o = order[i]!;
        if (typeIds.has(c.beliefType[o]!) && !subjectIds.has(c.subject[o]!) && add(o)) typed += 1;
      }
    } else if (anchored) {
      for (const s of subjectIds) for (const o of this.bySubject.get(s) ?? []) add(o);
      // A belief has one type: only one about a named subject was seen already.
      for (const x of new Set([...typeIds, ...(ownedTypeIds ?? [])])) {
        for (const o of this.byType.get(x) ?? []) if (!subjectIds.has(c.subject[o]!)) add(o);
      }
    } else {
      for (let o = 0; o < t.size; o++) add(o);
    }
    // Arm score, then the fixed authority order (authority, confidence, evidence, id), as the SQL orders.
    return firstK(matches, cap, (x, y) => y.armScore - x.armScore || rank[x.o]! - rank[y.o]!).map((m) => this.hot.candidate(m.o, m.armScore));
  }

  async lexicalCandidates(f: EligibilityFilter, q: LexicalQuery, cap: number, options?: ReadOptions): Promise<ArmCandidate[]> {
    this.own(f.principal);
    if (q.terms.length === 0) return [];
    const lexemes = await this.lookups.lexemes(q.terms, options);
    // Built after the await, and used before the next one.
    const eligible = this.eligibleOrd(f);
    this.scratch.ensure(this.table.size);
    return lexicalScores(this.postings, lexemes, eligible, this.table, this.scratch, q, cap).map((s) => this.hot.candidate(s.o, s.armScore));
  }

  async resolveNamedSubjects(
    f: EligibilityFilter,
    phrases: readonly string[],
    fuzzyWords: readonly string[],
    minSimilarity: number,
  ): Promise<NamedSubjects> {
    const eligible = this.eligibleOrd(f);
    if (phrases.length === 0 && fuzzyWords.length === 0) return { exact: [], fuzzy: [] };
    const subjects = this.table.filter.subjects;
    const anyEligible = (key: string) => (this.bySubject.get(subjects.find(key)) ?? []).some(eligible);
    const exact = new Set(phrases.filter(anyEligible));
    const fuzzy = new Set<string>();
    const keys = (this.subjectKeys ??= [...this.bySubject.keys()].map((id) => subjects.value(id)).sort());
    for (const word of fuzzyWords) {
      const prefix = word.slice(0, 3);
      for (let i = lowerBound(keys, prefix); i < keys.length && keys[i]!.startsWith(prefix); i += 1) {
        const key = keys[i]!;
        if (!exact.has(key) && similarity(key, word) >= minSimilarity && anyEligible(key)) fuzzy.add(key);
      }
    }
    // The SQL answers DISTINCT names, ordered, at most 32.
    const names = [...new Set([...exact, ...fuzzy])].sort().slice(0, 32);
    return { exact: names.filter((n) => exact.has(n)), fuzzy: names.filter((n) => !exact.has(n)) };
  }

  async semanticCandidates(f: EligibilityFilter, q: SemanticQuery, cap: number): Promise<ArmCandidate[] | null> {
    const eligible = this.eligibleOrd(f);
    const vectors = this.vectors;
    if (vectors === null || q.embedderId !== this.vectorsOf) return null;
    const query = Float32Array.from(q.vector);
    if (vectors.held > 0 && vectors.dim !== query.length) {
      throw new Error(`principal index: query vector of ${query.length} dimensions, stored ones of ${vectors.dim}`);
    }
    let squares = 0;
    for (let i = 0; i < query.length; i++) squares += query[i]! * query[i]!;
    const norm = Math.sqrt(squares);
    // As the SQL: the distance is 1 - cosine (kept within -1..1), bounded by 1 - minSimilarity; NaN never passes.
    const maxDistance = 1 - q.minSimilarity;
    const matches: { o: number; distance: number }[] = [];
    for (let o = 0; o < this.table.size; o++) {
      if (!eligible(o)) continue;
      const distance = 1 - Math.min(1, Math.max(-1, vectors.cosine(o, query, norm)));
      if (distance <= maxDistance) matches.push({ o, distance });
    }
    const t = this.table;
    return firstK(matches, cap, (x, y) => x.distance - y.distance || compareIds(t.id(x.o), t.id(y.o))).map((m) =>
      this.hot.candidate(m.o, 1 - m.distance),
    );
  }

  async deltaCandidates(f: EligibilityFilter, afterPosition: number, cap: number): Promise<ArmCandidate[]> {
    const eligible = this.eligibleOrd(f);
    // Only the rows above the watermark are read: usually none or a few of the principal's thousands.
    const out: ArmCandidate[] = [];
    for (const o of this.byPosition.ordered) {
      if (this.table.position(o) <= afterPosition || out.length >= cap) break;
      if (eligible(o)) out.push(this.hot.candidate(o, 1));
    }
    return out;
  }

  writtenAfter(p: Principal, afterPosition: number): boolean {
    this.own(p);
    const newest = this.byPosition.ordered[0];
    return newest !== undefined && this.table.position(newest) > afterPosition;
  }

  async snapshotCorrections(p: Principal, returned: readonly string[], afterPosition: number, at: Date): Promise<Correction[]> {
    // A correction needs a row written after the watermark (the old row or its successor): with none, there is none.
    if (!this.writtenAfter(p, afterPosition)) return [];
    const corrections: Correction[] = [];
    const latestFirst = (x: StoredBelief, y: StoredBelief) => y.validFrom.getTime() - x.validFrom.getTime() || compareIds(x.beliefId, y.beliefId);
    for (const id of new Set(returned)) {
      const ord = this.ords.get(id);
      if (ord === undefined) continue;
      const old = this.table.belief(ord);
      const stopped =
        old.storePosition > afterPosition &&
        (old.status === "superseded" ||
          old.status === "expired" ||
          (old.validTo !== null && old.validTo.getTime() <= at.getTime()) ||
          (old.retractedAt !== null && old.retractedAt.getTime() <= at.getTime()));
      // As the SQL: a successor in force at `at`, written after the watermark, corrects the old row left as it was.
      const inForce = this.successorsOf(id).filter((n) => successorInForce(n, id, at.getTime(), at.getTime())).sort(latestFirst)[0];
      if (!stopped && !(inForce !== undefined && inForce.storePosition > afterPosition)) continue;
      const successor = this.successorsOf(id).filter((n) => n.status === "active" || n.status === "provisional").sort(latestFirst)[0];
      const closedAt = [old.validTo, inForce?.validFrom].filter((d): d is Date => d !== null && d !== undefined).sort((x, y) => x.getTime() - y.getTime())[0];
      const since = closedAt ?? successor?.validFrom ?? old.retractedAt ?? this.table.lastRejected(ord) ?? old.recordedAt;
      corrections.push({ beliefId: id, supersededBy: (inForce ?? successor)?.beliefId ?? null, noLongerHoldsAsOf: since });
    }
    return corrections.sort((x, y) => compareIds(x.beliefId, y.beliefId));
  }

  /** The principal's beliefs naming `id` in their supersedes (made from the table: rarely asked). */
  private successorsOf(id: string): StoredBelief[] {
    const out: StoredBelief[] = [];
    for (const sid of this.successors.get(id) ?? []) {
      const o = this.ords.get(sid);
      if (o !== undefined) out.push(this.table.belief(o));
    }
    return out;
  }

  /** The structured arm's order among equal arm scores, as the SQL's ORDER BY: authority, confidence desc, evidence desc, id. */
  private authorityFirst(x: number, y: number): number {
    const t = this.table;
    return (
      AUTHORITY_ORDER[t.authorityOf(x)] - AUTHORITY_ORDER[t.authorityOf(y)] ||
      t.confidenceOf(y) - t.confidenceOf(x) ||
      t.evidenceOf(y) - t.evidenceOf(x) ||
      compareIds(t.id(x), t.id(y))
    );
  }

  /** The delta arm's order: store position descending, then id. */
  private newestFirst(x: number, y: number): number {
    const t = this.table;
    return t.position(y) - t.position(x) || compareIds(t.id(x), t.id(y));
  }
}

function isOwnership(statement: string): boolean {
  return OWNERSHIP.test(statement) && !NOT_OWNERSHIP.test(statement);
}

/** First index in sorted `keys` not below `value`. */
function lowerBound(keys: readonly string[], value: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

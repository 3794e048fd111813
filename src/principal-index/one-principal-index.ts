import type { Correction, Principal, StoredBelief } from "../domain/model.js";
import {
  AUTHORITY_ORDER,
  type ArmCandidate,
  type CandidateSource,
  type LexicalQuery,
  type NamedSubjects,
  type ReadOptions,
  type StructuredAnchors,
} from "../ports/candidate-source.js";
import type { EligibilityFilter } from "../domain/hard-filter.js";
import { eligibilityTest, successorInForce } from "./eligibility.js";
import { firstK } from "./first-k.js";
import { OrderedBeliefs } from "./ordered-beliefs.js";
import { BeliefColumns } from "./columns.js";
import { VerdictMemo } from "./verdict-memo.js";
import { compareIds, lexicalScores, ScoringScratch } from "./lexical-scoring.js";
import { indexedBytes, type IndexedBelief, type SideTables } from "./loading.js";
import { Postings } from "./postings.js";
import { Vocabulary } from "./vocabulary.js";
import { similarity } from "./trigram.js";

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
 */
export class PrincipalIndex implements CandidateSource {
  position: number;
  private readonly beliefs = new Map<string, IndexedBelief>();
  /** Every belief by its ordinal (IndexedBelief.ord): what the columns and postings point at. */
  private readonly byOrd: IndexedBelief[] = [];
  /** What the hard filter reads, by ordinal. */
  private readonly columns = new BeliefColumns();
  private readonly scratch = new ScoringScratch();
  private readonly verdicts = new VerdictMemo();
  private readonly postings = new Postings();
  private readonly bySubject = new Map<string, Set<IndexedBelief>>();
  private readonly byType = new Map<string, Set<IndexedBelief>>();
  /** Sorted distinct subject keys, for the misspelt-name prefix search; rebuilt lazily. */
  private subjectKeys: string[] | null = null;
  /** The delta arm's order: newest store position first. */
  private readonly byPosition = new OrderedBeliefs(() => this.beliefs.values(), newestFirst);
  /** The structured arm's order among beliefs of equal arm score: authority, confidence, evidence, id. */
  private readonly byAuthority = new OrderedBeliefs(() => this.beliefs.values(), authorityFirst);
  /** Old belief id → beliefs naming it in their supersedes. */
  private readonly successors = new Map<string, Set<string>>();
  private persona: ReadonlySet<string> = new Set();
  private aliases: ReadonlyMap<string, string> = new Map();
  private aliasesBySubject = new Map<string, string[]>();
  private beliefBytes = 0;
  private readonly vocabulary = new Vocabulary();

  constructor(
    readonly principal: Principal,
    side: SideTables,
    beliefs: readonly IndexedBelief[],
    private readonly lookups: IndexLookups,
  ) {
    this.position = side.position;
    this.setSideTables(side);
    this.upsert(beliefs);
  }

  /** Every belief row held. */
  beliefRows(): StoredBelief[] {
    return [...this.beliefs.values()].map((ib) => ib.belief);
  }

  get size(): number {
    return this.beliefs.size;
  }

  /** Approximate heap held, for RECALL_INDEX_MB. */
  get bytes(): number {
    return this.beliefBytes + this.vocabulary.bytes + this.columns.bytes + (this.persona.size + this.aliases.size) * 120 + 4096;
  }

  /** Replaces rows by id (a delta, or the rows feedback changed). */
  upsert(rows: readonly IndexedBelief[]): void {
    for (const next of rows) {
      const id = next.belief.beliefId;
      const old = this.beliefs.get(id);
      if (old) this.unlink(old);
      this.vocabulary.intern(next);
      next.ord = old ? old.ord : this.byOrd.length;
      this.byOrd[next.ord] = next;
      this.beliefs.set(id, next);
      this.columns.set(next, this.persona.has(id), this.successors.has(id));
      this.verdicts.forget([next.ord]);
      this.byPosition.place(next, old, rows.length);
      this.byAuthority.place(next, old, rows.length);
      this.postings.add(next);
      let group = this.bySubject.get(next.subjectKey);
      if (!group) {
        this.bySubject.set(next.subjectKey, (group = new Set()));
        this.subjectKeys = null;
      }
      group.add(next);
      let typed = this.byType.get(next.belief.beliefType);
      if (!typed) this.byType.set(next.belief.beliefType, (typed = new Set()));
      typed.add(next);
      for (const oldId of next.belief.supersedes) {
        let set = this.successors.get(oldId);
        if (!set) this.successors.set(oldId, (set = new Set()));
        set.add(id);
        const replaced = this.beliefs.get(oldId);
        if (replaced) {
          this.columns.mayBeSuperseded[replaced.ord] = 1;
          this.verdicts.forget([replaced.ord]);
        }
      }
      this.beliefBytes += indexedBytes(next);
    }
  }

  setSideTables(side: SideTables): void {
    this.persona = side.persona;
    this.verdicts.clear();
    this.columns.personaHeld.fill(0);
    for (const id of side.persona) {
      const held = this.beliefs.get(id);
      if (held) this.columns.personaHeld[held.ord] = 1;
    }
    this.aliases = side.aliases;
    const bySubject = new Map<string, string[]>();
    for (const [key, subject] of side.aliases) bySubject.set(subject, [...(bySubject.get(subject) ?? []), key]);
    this.aliasesBySubject = bySubject;
  }

  private unlink(old: IndexedBelief): void {
    this.postings.remove(old);
    const group = this.bySubject.get(old.subjectKey);
    group?.delete(old);
    if (group?.size === 0) {
      this.bySubject.delete(old.subjectKey);
      this.subjectKeys = null;
    }
    this.byType.get(old.belief.beliefType)?.delete(old);
    for (const oldId of old.belief.supersedes) this.successors.get(oldId)?.delete(old.belief.beliefId);
    this.beliefBytes -= indexedBytes(old);
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
    const idOf = (ord: number) => this.byOrd[ord]!.belief.beliefId;
    return eligibilityTest(f, this.columns, (ord) => this.successorsOf(idOf(ord)), idOf, this.verdicts.forFilter(f, this.byOrd.length));
  }

  /** The same, for an arm holding the belief. */
  private eligible(f: EligibilityFilter): (b: IndexedBelief) => boolean {
    const test = this.eligibleOrd(f);
    return (ib) => test(ib.ord);
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
    const eligible = this.eligible(f);
    const subjects = new Set(anchors.subjects);
    const types = new Set(anchors.types);
    const owned = anchors.owned ?? null;
    const anchored = subjects.size > 0 || types.size > 0 || owned !== null;
    const score = (ib: IndexedBelief) => {
      const b = ib.belief;
      const subject = subjects.has(ib.subjectKey);
      const type = types.has(b.beliefType);
      const ownership = owned !== null && owned.types.includes(b.beliefType) && OWNERSHIP.test(b.statement) && !NOT_OWNERSHIP.test(b.statement);
      return anchored && !subject && !type && !ownership ? 0 : Math.max(subject ? 1 : 0, ownership ? owned!.weight : 0, type ? anchors.typeWeight : 0);
    };
    this.byAuthority.ranked();
    const matches: { ib: IndexedBelief; armScore: number }[] = [];
    const add = (ib: IndexedBelief) => {
      if (!eligible(ib)) return false;
      const armScore = score(ib);
      if (anchored && armScore === 0) return false;
      matches.push({ ib, armScore });
      return true;
    };
    if (owned === null && types.size > 0) {
      // A type anchor matches thousands (a snapshot's durable types), all with the same score: only
      // the first `cap` of them in authority order can make the cut, so they are read in that order.
      for (const s of subjects) for (const ib of this.bySubject.get(s) ?? []) add(ib);
      // Walked by ordinal over the columns: most beliefs are of other types, and are passed over unread.
      const c = this.columns;
      const typeIds = new Set([...types].map((t) => c.types.find(t)));
      const subjectIds = new Set([...subjects].map((s) => c.subjects.find(s)));
      const order = this.byAuthority.ordinals();
      let typed = 0;
      for (let i = 0; i < order.length && typed < cap; i++) {
        const o = order[i]!;
        if (typeIds.has(c.beliefType[o]!) && !subjectIds.has(c.subject[o]!) && add(this.byOrd[o]!)) typed += 1;
      }
    } else {
      for (const ib of anchored ? this.anchoredBeliefs(subjects, [...types, ...(owned?.types ?? [])]) : this.beliefs.values()) add(ib);
    }
    // Arm score, then the fixed authority order (authority, confidence, evidence, id), as the SQL orders.
    return firstK(matches, cap, (x, y) => y.armScore - x.armScore || x.ib.rank - y.ib.rank).map((m) => ({ belief: m.ib.belief, armScore: m.armScore, memo: m.ib.memo }));
  }

  /** Beliefs about one of the subjects or of one of the types: every belief an anchored lookup can match, each once. */
  private *anchoredBeliefs(subjects: ReadonlySet<string>, types: readonly string[]): Iterable<IndexedBelief> {
    for (const s of subjects) yield* this.bySubject.get(s) ?? [];
    // A belief has one type: only one about a named subject was seen already.
    for (const t of new Set(types)) for (const b of this.byType.get(t) ?? []) if (!subjects.has(b.subjectKey)) yield b;
  }

  async lexicalCandidates(f: EligibilityFilter, q: LexicalQuery, cap: number, options?: ReadOptions): Promise<ArmCandidate[]> {
    this.own(f.principal);
    if (q.terms.length === 0) return [];
    const lexemes = await this.lookups.lexemes(q.terms, options);
    // Built after the await, and used before the next one.
    const eligible = this.eligibleOrd(f);
    this.scratch.ensure(this.byOrd.length);
    return lexicalScores(this.postings, lexemes, eligible, (ord) => this.byOrd[ord]!, this.columns.idPrefix, this.scratch, q, cap);
  }

  async resolveNamedSubjects(
    f: EligibilityFilter,
    phrases: readonly string[],
    fuzzyWords: readonly string[],
    minSimilarity: number,
  ): Promise<NamedSubjects> {
    const eligible = this.eligible(f);
    if (phrases.length === 0 && fuzzyWords.length === 0) return { exact: [], fuzzy: [] };
    const anyEligible = (key: string) => [...(this.bySubject.get(key) ?? [])].some(eligible);
    const exact = new Set(phrases.filter(anyEligible));
    const fuzzy = new Set<string>();
    const keys = (this.subjectKeys ??= [...this.bySubject.keys()].sort());
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

  async deltaCandidates(f: EligibilityFilter, afterPosition: number, cap: number): Promise<ArmCandidate[]> {
    const eligible = this.eligible(f);
    // Only the rows above the watermark are read: usually none or a few of the principal's thousands.
    const out: ArmCandidate[] = [];
    for (const ib of this.byPosition.ordered) {
      if (ib.belief.storePosition <= afterPosition || out.length >= cap) break;
      if (eligible(ib)) out.push({ belief: ib.belief, armScore: 1, memo: ib.memo });
    }
    return out;
  }

  async snapshotCorrections(p: Principal, returned: readonly string[], afterPosition: number, at: Date): Promise<Correction[]> {
    this.own(p);
    // A correction needs a row written after the watermark (the old row or its successor): with none, there is none.
    const newest = this.byPosition.ordered[0];
    if (newest === undefined || newest.belief.storePosition <= afterPosition) return [];
    const corrections: Correction[] = [];
    const latestFirst = (x: StoredBelief, y: StoredBelief) => y.validFrom.getTime() - x.validFrom.getTime() || compareIds(x.beliefId, y.beliefId);
    for (const id of new Set(returned)) {
      const old = this.beliefs.get(id)?.belief;
      if (!old) continue;
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
      const since = closedAt ?? successor?.validFrom ?? old.retractedAt ?? this.beliefs.get(id)!.lastRejectedAt ?? old.recordedAt;
      corrections.push({ beliefId: id, supersededBy: (inForce ?? successor)?.beliefId ?? null, noLongerHoldsAsOf: since });
    }
    return corrections.sort((x, y) => compareIds(x.beliefId, y.beliefId));
  }

  /** The principal's beliefs naming `id` in their supersedes. */
  private successorsOf(id: string): StoredBelief[] {
    const out: StoredBelief[] = [];
    for (const sid of this.successors.get(id) ?? []) {
      const n = this.beliefs.get(sid);
      if (n) out.push(n.belief);
    }
    return out;
  }
}

/** The structured arm's order among equal arm scores, as the SQL's ORDER BY: authority, confidence desc, evidence desc, id. */
function authorityFirst(x: IndexedBelief, y: IndexedBelief): number {
  return (
    AUTHORITY_ORDER[x.belief.authority] - AUTHORITY_ORDER[y.belief.authority] ||
    y.belief.confidence - x.belief.confidence ||
    y.belief.evidenceCount - x.belief.evidenceCount ||
    compareIds(x.belief.beliefId, y.belief.beliefId)
  );
}

/** The delta arm's order: store position descending, then id. */
function newestFirst(x: IndexedBelief, y: IndexedBelief): number {
  return y.belief.storePosition - x.belief.storePosition || compareIds(x.belief.beliefId, y.belief.beliefId);
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

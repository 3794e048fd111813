import type { ConfidenceBand, StoredBelief } from "../../domain/model.js";
import { byScoreThenId } from "../render/assemble.js";
import type { ProfileWeights, RetrievalPolicy } from "../policy.js";
import { lexicalTerms } from "../query-former.js";
import type { Collapsible } from "./collapse.js";
import { lowerSubjectOf } from "../../ports/row-memo.js";
import { StringPairMemo } from "../../domain/string-memo.js";

/**
 * Step 5: the hand-weighted, versioned ranking function.
 *
 *   score = w_match·match + w_conf·conf + w_reinforce·reinforce + w_authority·authority
 *         + w_scope·scope_affinity + w_utility·utility − w_penalty·penalty
 *
 * Each feature is a small pure function of the belief, the query's scope and
 * the reference time (the rendered as_of, never the wall clock, so the same
 * belief set always ranks the same). The one part of the penalty that depends
 * on the other candidates, being a near-duplicate of a higher-ranked one, is
 * applied after this first ranking (demoteNearDuplicates).
 */

const DAY_MS = 86_400_000;

export function conf(b: StoredBelief): number {
  const lifecycle = b.status === "active" ? 1 : b.status === "provisional" ? 0.4 : 0;
  return b.confidence * lifecycle;
}

export function reinforce(b: StoredBelief, at: Date, policy: RetrievalPolicy): number {
  const corroboration = Math.min(1, Math.log1p(b.evidenceCount) / Math.log1p(policy.reinforceSaturation));
  const tauDays = policy.decayDays[b.beliefType] ?? policy.defaultDecayDays;
  const ageDays = Math.max(0, (at.getTime() - b.lastEvidenceAt.getTime()) / DAY_MS);
  return corroboration * Math.exp(-ageDays / tauDays);
}

export function authority(b: StoredBelief, policy: RetrievalPolicy): number {
  return policy.authority[b.authority];
}

/** True when the belief is recalled outside the project it was learned in. */
export function isCarried(b: StoredBelief, currentScope: string): boolean {
  return b.scopeLevel === "project" && b.originScope !== currentScope;
}

/** Current project and user/global beliefs at parity; carried beliefs discounted by portability. */
export function scopeAffinity(b: StoredBelief, currentScope: string, policy: RetrievalPolicy): number {
  return isCarried(b, currentScope) ? policy.carriedAffinity[b.portability] : 1;
}

export function penalty(b: StoredBelief, at: Date, policy: RetrievalPolicy): number {
  let p = 0;
  if (b.flaggedForReview) p += policy.penalty.flagged;
  if (b.expiresHint && b.expiresHint.getTime() <= at.getTime()) p += policy.penalty.pastExpiresHint;
  return p;
}

export function score(
  b: StoredBelief,
  match: number,
  context: { currentScope: string; at: Date; weights: ProfileWeights },
  policy: RetrievalPolicy,
): number {
  const w = context.weights;
  const raw =
    w.match * match +
    w.conf * conf(b) +
    w.reinforce * reinforce(b, context.at, policy) +
    w.authority * authority(b, policy) +
    w.scope * scopeAffinity(b, context.currentScope, policy) +
    w.utility * b.utility -
    w.penalty * penalty(b, context.at, policy);
  // Rounded so that float noise can never reorder equal beliefs between runs.
  return Math.round(raw * 1e9) / 1e9;
}

/** Bands, not floats, reach the model. A carried belief is shown one band lower. */
export function confidenceBand(b: StoredBelief, carried: boolean, policy: RetrievalPolicy): ConfidenceBand {
  const c = conf(b);
  const band: ConfidenceBand = c >= policy.bands.high ? "high" : c >= policy.bands.medium ? "medium" : "low";
  if (!carried) return band;
  return band === "high" ? "medium" : "low";
}

/** What the near-duplicate penalty reads of a ranked candidate: what collapse reads, and the score. */
export interface NearDuplicateCandidate extends Omit<Collapsible, "validFrom"> {
  score: number;
}

/**
 * The words a near-duplicate is measured on: the statement's content terms
 * (lower-cased, function words removed, negations kept), without the
 * subject's own words, which every statement about that subject shares.
 */
export function contentWords(statement: string, subject: string): ReadonlySet<string> {
  const known = CONTENT_WORDS.get(statement, subject);
  if (known) return known;
  const words = contentWordsComputed(statement, subject);
  CONTENT_WORDS.set(statement, subject, words);
  return words;
}

function contentWordsComputed(statement: string, subject: string, shared?: (word: string) => string): ReadonlySet<string> {
  const own = new Set(lexicalTerms(subject, Infinity));
  const words = lexicalTerms(statement, Infinity).filter((w) => !own.has(w));
  return new Set(shared ? words.map(shared) : words);
}

/**
 * The candidate's content words: kept with its row when its source keeps a
 * memo (ports/row-memo.ts), and then only there; kept in the table of every
 * statement seen as well, each would hold a map of its own there for as long.
 */
function contentWordsOf(item: NearDuplicateCandidate): ReadonlySet<string> {
  const memo = item.memo;
  return memo ? (memo.contentWords ??= contentWordsComputed(item.statement, item.subject, memo.shared)) : contentWords(item.statement, item.subject);
}

/**
 * As many statements as the safety findings keep (safety.ts): a principal of
 * 100k beliefs recalls more distinct statements than a smaller bound holds,
 * and at 8,192 two thirds of its lookups were computed again (in-turn p50
 * 8.75 -> 7.24 ms with this bound, side by side). About 330 bytes a
 * statement, so about 42 MiB when full.
 */
const CONTENT_WORDS = new StringPairMemo<ReadonlySet<string>>(131_072);

/** |a ∩ b| / |a ∪ b|; two empty sets say nothing, so they score 0. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/**
 * Each candidate that is a near-duplicate of a higher-ranked one (same
 * subject, content-word Jaccard at or above the policy's threshold), mapped
 * to the highest-ranked such one. `ranked` is the first ranking, best first.
 * Pairs that collapse already relates are exempt: a conflict partner is a
 * disagreement, not a copy, and a replaced belief or an older revision of the
 * same (subject, type, predicate key) is about to be removed, so it must not
 * drag its successor down.
 *
 * Only candidates about one subject are compared, so each subject's are
 * taken on their own. Most recalls hold a few per subject, compared pair by
 * pair; a subject with many (a snapshot's user) is compared by prefix
 * filtering, which stays below quadratic. Either way the result is exactly
 * that of comparing all pairs.
 */
export function nearDuplicates<T extends NearDuplicateCandidate>(ranked: readonly T[], policy: RetrievalPolicy): Map<string, string> {
  const { threshold } = policy.nearDuplicate;
  const sets = ranked.map(contentWordsOf);
  // Positions in rank order by subject; an item without content words is nobody's near-duplicate.
  const bySubject = new Map<string, number[]>();
  ranked.forEach((item, i) => {
    if (sets[i]!.size === 0) return;
    const subject = lowerSubjectOf(item);
    const group = bySubject.get(subject);
    if (group) group.push(i);
    else bySubject.set(subject, [i]);
  });
  // original[i]: the position of the highest-ranked item that i is a near-duplicate of, or -1.
  const original = new Int32Array(ranked.length).fill(-1);
  for (const positions of bySubject.values()) {
    if (positions.length < 2) continue;
    const group: SubjectGroup = { ranked, sets, positions, threshold, original };
    if (positions.length <= ALL_PAIRS_MAX) compareAllPairs(group);
    else comparePrefixes(group);
  }
  const result = new Map<string, string>();
  original.forEach((j, i) => {
    if (j >= 0) result.set(ranked[i]!.beliefId, ranked[j]!.beliefId);
  });
  return result;
}

/** A subject with at most this many candidates is compared pair by pair (at most 496 pairs). */
const ALL_PAIRS_MAX = 32;

/** One subject's candidates: their `positions` in `ranked` (ascending); each near-duplicate's original is written to `original`. */
interface SubjectGroup {
  ranked: readonly NearDuplicateCandidate[];
  sets: readonly ReadonlySet<string>[];
  positions: readonly number[];
  threshold: number;
  original: Int32Array;
}

/** Each position against every earlier one, best first: the first match is the original. */
function compareAllPairs({ ranked, sets, positions, threshold, original }: SubjectGroup): void {
  for (let a = 1; a < positions.length; a++) {
    const i = positions[a]!;
    for (let b = 0; b < a; b++) {
      const j = positions[b]!;
      if (!related(ranked[j]!, ranked[i]!) && jaccard(sets[j]!, sets[i]!) >= threshold) {
        original[i] = j;
        break;
      }
    }
  }
}

/**
 * The same by prefix filtering: with the group's words ordered rarest first,
 * two sets at or above the threshold share a word among the first
 * |x| − ⌈threshold·|x|⌉ + 1 of each, and only those prefixes are indexed.
 * Words are numbered for the group, so each candidate's words become a
 * sorted array of places and two candidates are compared by merging those
 * (the same Jaccard as on the sets, with no string hashed or compared).
 */
function comparePrefixes({ ranked, sets, positions, threshold, original }: SubjectGroup): void {
  const { places, wordCount } = placesRarestFirst(positions.map((i) => sets[i]!));
  // word's place → the group's members (in rank order) whose prefix holds the word.
  const index: (number[] | undefined)[] = new Array(wordCount);
  // judged[b] === a: member b was already compared with member a.
  const judged = new Int32Array(positions.length).fill(-1);
  for (let a = 0; a < positions.length; a++) {
    const mine = places[a]!;
    // The epsilon keeps float noise (0.6 × 5) from shortening the prefix.
    const prefixLength = mine.length - Math.ceil(threshold * mine.length - 1e-9) + 1;
    // The highest-ranked (smallest) member that shares a prefix word and is a near-duplicate. Each
    // word's members ascend, so a list is read only up to the best found; each member is judged once.
    let best = a;
    for (let k = 0; k < prefixLength; k++) {
      for (const b of index[mine[k]!] ?? []) {
        if (b >= best) break;
        if (judged[b] === a) continue;
        judged[b] = a;
        if (!related(ranked[positions[b]!]!, ranked[positions[a]!]!) && sortedJaccard(places[b]!, mine) >= threshold) best = b;
      }
    }
    if (best < a) original[positions[a]!] = positions[best]!;
    for (let k = 0; k < prefixLength; k++) (index[mine[k]!] ??= []).push(a);
  }
}

/**
 * Each set's words as their places in one total order of all the sets' words,
 * ascending: rarest first (in fewest sets), then by the word itself.
 */
function placesRarestFirst(sets: readonly ReadonlySet<string>[]): { places: Int32Array[]; wordCount: number } {
  const numberOf = new Map<string, number>();
  const words: string[] = [];
  const inSets: number[] = [];
  const places = sets.map((set) => {
    const numbers = new Int32Array(set.size);
    let k = 0;
    for (const w of set) {
      let n = numberOf.get(w);
      if (n === undefined) {
        n = words.length;
        numberOf.set(w, n);
        words.push(w);
        inSets.push(0);
      }
      inSets[n]! += 1;
      numbers[k++] = n;
    }
    return numbers;
  });
  const order = Array.from(words.keys()).sort((x, y) => inSets[x]! - inSets[y]! || (words[x]! < words[y]! ? -1 : 1));
  const placeOf = new Int32Array(words.length);
  order.forEach((n, place) => (placeOf[n] = place));
  for (const numbers of places) {
    for (let k = 0; k < numbers.length; k++) numbers[k] = placeOf[numbers[k]!]!;
    numbers.sort();
  }
  return { places, wordCount: words.length };
}

/** jaccard() of two sets given as ascending arrays of distinct numbers. */
function sortedJaccard(a: Int32Array, b: Int32Array): number {
  if (a.length === 0 && b.length === 0) return 0;
  let shared = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      shared += 1;
      i++;
      j++;
    }
  }
  return shared / (a.length + b.length - shared);
}

/**
 * The near-duplicate penalty, after the first ranking: each near-duplicate of
 * a higher-ranked candidate loses w_penalty × penalty.nearDuplicate, then all
 * are re-sorted by the total order (score desc, belief_id asc). Nothing is
 * removed: the merely similar are demoted, never deleted.
 */
export function demoteNearDuplicates<T extends NearDuplicateCandidate>(
  ranked: readonly T[],
  weights: ProfileWeights,
  policy: RetrievalPolicy,
): T[] {
  return demoted(ranked, new Set(nearDuplicates(ranked, policy).keys()), weights.penalty * policy.penalty.nearDuplicate);
}

/** What the source-coverage penalty reads of a ranked candidate: the near-duplicate fields and the cited episodes. */
export interface SourceCandidate extends NearDuplicateCandidate {
  sourceEpisodeIds: readonly string[];
}

/**
 * Candidates whose cited source episodes are all cited by higher-ranked
 * candidates: they add no evidence the block does not already hold (two
 * observations of one dialog turn). `ranked` is best first; a belief that
 * cites no episode is never covered, and, as for near-duplicates, a pair
 * that collapse relates (conflict partners, a belief and the one it
 * supersedes, revisions of one predicate key) does not count.
 */
export function coveredSources<T extends SourceCandidate>(ranked: readonly T[]): Set<string> {
  const citing = new Map<string, T[]>();
  const covered = new Set<string>();
  for (const item of ranked) {
    const sources = item.sourceEpisodeIds;
    if (sources.length > 0 && sources.every((e) => (citing.get(e) ?? []).some((above) => !related(above, item)))) covered.add(item.beliefId);
    for (const e of sources) {
      const list = citing.get(e);
      if (list) list.push(item);
      else citing.set(e, [item]);
    }
  }
  return covered;
}

/**
 * The source-coverage penalty, after the near-duplicate one: each candidate
 * whose sources higher-ranked candidates already cite loses w_penalty ×
 * penalty.sourceCovered, then all are re-sorted by the total order. Demoted,
 * never deleted, like a near-duplicate.
 */
export function demoteCoveredSources<T extends SourceCandidate>(ranked: readonly T[], weights: ProfileWeights, policy: RetrievalPolicy): T[] {
  return demoted(ranked, coveredSources(ranked), weights.penalty * policy.penalty.sourceCovered);
}

/** `ranked` with each of `ids` `by` lower (rounded, as score() rounds), in the total order again. */
function demoted<T extends { beliefId: string; score: number }>(ranked: readonly T[], ids: ReadonlySet<string>, by: number): T[] {
  if (ids.size === 0) return [...ranked];
  return ranked
    .map((item) => (ids.has(item.beliefId) ? { ...item, score: Math.round((item.score - by) * 1e9) / 1e9 } : item))
    .sort(byScoreThenId);
}

function related(a: NearDuplicateCandidate, b: NearDuplicateCandidate): boolean {
  return (
    a.conflictsWith.includes(b.beliefId) ||
    b.conflictsWith.includes(a.beliefId) ||
    a.supersedes.includes(b.beliefId) ||
    b.supersedes.includes(a.beliefId) ||
    (a.predicateKey !== "" && a.predicateKey === b.predicateKey && a.beliefType === b.beliefType)
  );
}

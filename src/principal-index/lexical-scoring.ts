import type { LexicalQuery } from "../ports/candidate-source.js";
import type { BeliefTable } from "./belief-table.js";
import { roundLikePostgres } from "./pg-numeric.js";
import { bm25Idf } from "./bm25-idf.js";
import { firstK } from "./first-k.js";
import type { Postings } from "./postings.js";

/**
 * The lexical arm's BM25F over the index, step for step as the SQL arm
 * computes it (store/candidates/sql-candidates.ts lexicalCandidates), so both give the
 * same candidates and the same scores:
 *  1. matched: eligible beliefs holding any query lexeme;
 *  2. idf per lexeme from its document frequency among the matched;
 *  3. the prescoreCap matches with the highest summed idf (rounded to 12
 *     places as numeric, ties by id) are scored exactly;
 *  4. BM25F with per-field weights on tf and length, collection totals over
 *     all of the principal's beliefs; named-subject and date boosts; rounded.
 * The float operations are written in the SQL's order. Answers the top
 * `cap` ordinals with their arm scores, best first.
 */
export function lexicalScores(
  postings: Postings,
  lexemes: readonly string[],
  eligible: (ord: number) => boolean,
  table: BeliefTable,
  scratch: ScoringScratch,
  q: LexicalQuery,
  cap: number,
): { o: number; armScore: number }[] {
  const s = q.scoring;
  const w = [s.fieldWeights.subject, s.fieldWeights.statement, s.fieldWeights.source, s.fieldWeights.neighbours] as const;
  const { docs, lengths } = postings.totals;
  const n = Math.max(docs, 1);
  const avgdl = Math.max((lengths[0]! * w[0] + lengths[1]! * w[1] + lengths[2]! * w[2] + lengths[3]! * w[3]) / Math.max(docs, 1), 1e-9);

  // 1-2. Matches and document frequencies, eligibility first, judged once per belief. Lexemes in
  // tsvector order, the order PostgreSQL adds them in (float sums depend on it).
  const pass = scratch.nextPass();
  const { stamp, verdict, prescore } = scratch;
  const matched: number[] = [];
  const idf = new Map<string, number>();
  for (const lexeme of [...new Set(lexemes)].sort(compareLexemes)) {
    const list = postings.get(lexeme);
    if (!list) continue;
    let df = 0;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (stamp[o] !== pass) {
        stamp[o] = pass;
        prescore[o] = 0;
        verdict[o] = eligible(o) ? 1 : 0;
        if (verdict[o] === 1) matched.push(o);
      }
      df += verdict[o]!;
    }
    if (df === 0) continue;
    const termIdf = bm25Idf(n, df);
    idf.set(lexeme, termIdf);
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (verdict[o] === 1) prescore[o] = prescore[o]! + termIdf;
    }
  }

  // 3. Prescore by summed idf, compared as the rounded numeric the SQL orders by; ties by id
  // (its uuid prefix, BeliefColumns.idPrefix, first: the cheap part of the id order).
  const idPrefix = table.filter.idPrefix;
  const pre = firstK(
    matched,
    s.prescoreCap,
    (x, y) =>
      compareRounded(prescore[y]!, prescore[x]!) ||
      idPrefix[x]! - idPrefix[y]! ||
      compareIds(table.id(x), table.id(y)),
  );

  // 4. Exact BM25F, boosts, rounding.
  const names = new Set(q.names);
  const dateNamed = q.dates.years.length > 0 || q.dates.months.length > 0;
  const scored = pre.map((o) => {
    const dl = table.length(o, 0) * w[0] + table.length(o, 1) * w[1] + table.length(o, 2) * w[2] + table.length(o, 3) * w[3];
    let bm25 = 0;
    table.eachTerm(o, (lexeme, labels) => {
      const termIdf = idf.get(lexeme);
      if (termIdf === undefined) return;
      let tf = 0;
      for (const label of labels) tf += label === "A" ? w[0] : label === "B" ? w[1] : label === "C" ? w[2] : w[3];
      bm25 += (termIdf * tf * (s.k1 + 1)) / (tf + s.k1 * (1 - s.b + (s.b * dl) / avgdl));
    });
    const named = names.has(table.subjectKey(o)) ? s.namedSubjectBoost : 1;
    const dated = dateNamed && dateMatches(new Date(table.filter.validFrom[o]!), q.dates) ? s.dateBoost : 1;
    return { o, armScore: roundLikePostgres(bm25 * named * dated, 12) };
  });
  return scored.sort((x, y) => y.armScore - x.armScore || compareIds(table.id(x.o), table.id(y.o))).slice(0, cap);
}

/**
 * The working state of one lexical scoring pass, by belief ordinal, reused
 * from pass to pass (scoring is synchronous): an entry belongs to the pass
 * that stamped it, so nothing is cleared or allocated per belief.
 */
export class ScoringScratch {
  stamp = new Int32Array(0);
  verdict = new Uint8Array(0);
  prescore = new Float64Array(0);
  private pass = 0;

  /** Room for ordinals below `size`. */
  ensure(size: number): void {
    if (size <= this.stamp.length) return;
    const capacity = Math.max(size, this.stamp.length * 2, 1024);
    const stamp = new Int32Array(capacity);
    stamp.set(this.stamp);
    this.stamp = stamp;
    this.verdict = new Uint8Array(capacity);
    this.prescore = new Float64Array(capacity);
  }

  nextPass(): number {
    this.pass = (this.pass + 1) | 0;
    if (this.pass === 0) {
      // Wrapped around: no stamp may look current.
      this.stamp.fill(0);
      this.pass = 1;
    }
    return this.pass;
  }
}

function dateMatches(validFrom: Date, dates: LexicalQuery["dates"]): boolean {
  const yearOk = dates.years.length === 0 || dates.years.includes(validFrom.getUTCFullYear());
  const monthOk = dates.months.length === 0 || dates.months.includes(validFrom.getUTCMonth() + 1);
  return yearOk && monthOk;
}

/**
 * a vs b as round(x::numeric, 12) would order them. Rounding is monotonic, so
 * values apart by more than it can merge keep their order; only near-equal
 * ones are rounded (it is the costly part) to see whether they tie.
 */
function compareRounded(a: number, b: number): number {
  if (a === b) return 0;
  if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a))) return a - b;
  return roundLikePostgres(a, 12) - roundLikePostgres(b, 12);
}

/** tsvector lexeme order: bytes (UTF-8), a prefix first. */
function compareLexemes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** uuid order as PostgreSQL sorts it: the lower-case hex text's order. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

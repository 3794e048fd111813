import { aggregate, scoreQuestion, type Aggregate, type QuestionScore } from "./retrieval-metrics.js";

/**
 * What the LoCoMo evaluation reports beyond the ranked table: the figures
 * per question category, the coverage ceiling (how much of the evidence any
 * loaded belief cites at all: the most any ranking of these beliefs can
 * find), and what is actually injected, i.e. the block rendered at the
 * production in-turn caps with the floor on. Pure: scores in, aggregates out.
 */

/** The groups reported: each category on its own, and 1–4 together (5, adversarial, apart). */
export const CATEGORY_GROUPS = ["1", "2", "3", "4", "5", "1-4"] as const;
export type CategoryGroup = (typeof CATEGORY_GROUPS)[number];

export function groupsOf(category: number): CategoryGroup[] {
  const own = String(category) as CategoryGroup;
  const groups: CategoryGroup[] = CATEGORY_GROUPS.includes(own) ? [own] : [];
  if (category >= 1 && category <= 4) groups.push("1-4");
  return groups;
}

/** The share of a question's evidence ids that some loaded belief cites. */
export function coverageCeiling(evidence: readonly string[], cited: ReadonlySet<string>): number {
  return evidence.length === 0 ? 0 : evidence.filter((d) => cited.has(d)).length / evidence.length;
}

/** One question as the rendered block saw it. */
export interface InjectedScore {
  /** Recall within the block: the share of evidence ids its items cite. */
  frac: number;
  /** Every evidence id cited by the block. */
  all: boolean;
  /** Share of the block's items that cite no evidence id; null when nothing was rendered. */
  noise: number | null;
  items: number;
  tokens: number;
}

export function scoreInjected(renderedProvenance: readonly (readonly string[])[], evidence: readonly string[], tokens: number): InjectedScore {
  const s = scoreQuestion(renderedProvenance, evidence, renderedProvenance.length);
  return { frac: s.frac, all: s.all, noise: s.noise, items: renderedProvenance.length, tokens };
}

export interface InjectedAggregate {
  questions: number;
  frac: number;
  all: number;
  /** Mean over the questions that rendered anything. */
  noise: number;
  items: number;
  tokens: number;
  /** Share of questions whose block was empty. */
  empty: number;
}

export function aggregateInjected(scores: readonly InjectedScore[]): InjectedAggregate {
  const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const rendered = scores.filter((s) => s.noise !== null);
  return {
    questions: scores.length,
    frac: mean(scores.map((s) => s.frac)),
    all: mean(scores.map((s) => (s.all ? 1 : 0))),
    noise: mean(rendered.map((s) => s.noise!)),
    items: mean(scores.map((s) => s.items)),
    tokens: mean(scores.map((s) => s.tokens)),
    empty: scores.length === 0 ? 0 : (scores.length - rendered.length) / scores.length,
  };
}

/** Everything gathered for one group of questions. */
export interface GroupTally {
  ranked: Record<number, QuestionScore[]>;
  bm25: Record<number, QuestionScore[]>;
  ceiling: number[];
  injected: InjectedScore[];
}

export interface GroupReport {
  questions: number;
  recall: Record<number, Aggregate>;
  bm25: Record<number, Aggregate>;
  /** Mean coverage ceiling of the group's questions. */
  ceiling: number;
  /** frac@k of the ranking as a share of the ceiling (1 = everything any belief cites was found). */
  fracOfCeiling: Record<number, number>;
  injected: InjectedAggregate;
}

export function emptyTally(ks: readonly number[]): GroupTally {
  return {
    ranked: Object.fromEntries(ks.map((k) => [k, []])),
    bm25: Object.fromEntries(ks.map((k) => [k, []])),
    ceiling: [],
    injected: [],
  };
}

export function reportGroup(t: GroupTally, ks: readonly number[]): GroupReport {
  const ceiling = t.ceiling.length === 0 ? 0 : t.ceiling.reduce((a, b) => a + b, 0) / t.ceiling.length;
  const recall = Object.fromEntries(ks.map((k) => [k, aggregate(t.ranked[k]!)]));
  return {
    questions: t.ceiling.length,
    recall,
    bm25: Object.fromEntries(ks.map((k) => [k, aggregate(t.bm25[k]!)])),
    ceiling,
    fracOfCeiling: Object.fromEntries(ks.map((k) => [k, ceiling === 0 ? 0 : recall[k]!.frac / ceiling])),
    injected: aggregateInjected(t.injected),
  };
}

/** The plain-text tables: ranking per category against its ceiling, then what is injected. */
export function formatBreakdown(groups: Partial<Record<CategoryGroup, GroupReport>>, ks: readonly number[], caps: { items: number; budget: number }): string[] {
  const pct = (x: number) => (100 * x).toFixed(1).padStart(5);
  const present = CATEGORY_GROUPS.filter((g) => groups[g] !== undefined);
  const ranking = [
    "per category (ranked list): ceiling = share of evidence ids any loaded belief cites; frac/ceil = frac as a share of it",
    `cat    n     ceiling  ${ks.map((k) => `frac@${k} frac/ceil@${k}`).join("  ")}`,
    ...present.map((g) => {
      const r = groups[g]!;
      return `${g.padEnd(6)} ${String(r.questions).padEnd(5)} ${pct(r.ceiling)}    ${ks.map((k) => `${pct(r.recall[k]!.frac)}  ${pct(r.fracOfCeiling[k]!)}      `).join("")}`.trimEnd();
    }),
  ];
  const injected = [
    `injected (the rendered block at ${caps.items} items / ${caps.budget} tokens, floor on): recall and noise within the block`,
    "cat    n     recall  all    noise  items  tokens  empty",
    ...present.map((g) => {
      const i = groups[g]!.injected;
      return `${g.padEnd(6)} ${String(i.questions).padEnd(5)} ${pct(i.frac)}  ${pct(i.all)}  ${pct(i.noise)}  ${i.items.toFixed(1).padStart(5)}  ${i.tokens.toFixed(0).padStart(6)}  ${pct(i.empty)}`;
    }),
  ];
  return [...ranking, ...injected];
}

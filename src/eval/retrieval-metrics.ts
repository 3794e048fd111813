/**
 * The project's retrieval scoring for LoCoMo (docs/evaluation.md):
 * a retrieved belief is relevant when one of its dia_ids is in the
 * question's evidence. frac@k is the mean share of evidence ids covered by
 * the top k; all@k the share of questions with every evidence id covered;
 * noise@k the share of the top k that is not relevant (over questions that
 * returned anything).
 */

export interface QuestionScore {
  frac: number;
  all: boolean;
  /** null when nothing was returned in the top k. */
  noise: number | null;
}

export function scoreQuestion(rankedProvenance: readonly (readonly string[])[], evidence: readonly string[], k: number): QuestionScore {
  const top = rankedProvenance.slice(0, k);
  const wanted = new Set(evidence);
  const covered = new Set(top.flat().filter((d) => wanted.has(d)));
  const relevant = top.filter((dias) => dias.some((d) => wanted.has(d))).length;
  return {
    frac: covered.size / wanted.size,
    all: covered.size === wanted.size,
    noise: top.length === 0 ? null : (top.length - relevant) / top.length,
  };
}

export interface Aggregate {
  questions: number;
  frac: number;
  all: number;
  noise: number;
}

export function aggregate(scores: readonly QuestionScore[]): Aggregate {
  const noisy = scores.filter((s) => s.noise !== null);
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  return {
    questions: scores.length,
    frac: mean(scores.map((s) => s.frac)),
    all: mean(scores.map((s) => (s.all ? 1 : 0))),
    noise: mean(noisy.map((s) => s.noise!)),
  };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

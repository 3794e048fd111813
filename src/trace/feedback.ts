/**
 * Step 9's feedback into formation, as pure rules (the store applies them):
 * - a cited belief gains utility and last_used_at, never evidence or confidence;
 * - a belief returned and never cited within the window loses utility, so one
 *   that keeps winning the ranking without ever mattering stops winning it;
 * - a subject queried with nothing about it rendered is a recall miss, and
 *   repeated misses make a re-derivation hint for formation.
 *
 * Utility lives in [-1, 1] and starts at 0: a gain moves it a share of the way
 * to 1, a loss a share of the way to -1, so neither can leave the range.
 * These steps change stored utility, not the ranking function, so they are
 * not part of the retrieval policy's version.
 */
export const FEEDBACK = Object.freeze({
  /** Share of the distance to 1 a citation adds. */
  citationGain: 0.2,
  /** Share of the distance to -1 one uncited return takes away: weaker than a citation. */
  uncitedLoss: 0.05,
  /** Misses after which a subject is listed as a re-derivation hint ("repeatedly"). */
  hintMinMisses: 2,
});

/** Utility after `n` uncited returns: each step is u -> u - (1 + u) * loss. */
export function utilityAfterUncited(utility: number, n: number, loss = FEEDBACK.uncitedLoss): number {
  return (1 + utility) * (1 - loss) ** n - 1;
}

/** Utility after one citation: u -> u + (1 - u) * gain. */
export function utilityAfterCitation(utility: number, gain = FEEDBACK.citationGain): number {
  return utility + (1 - utility) * gain;
}

/** A subject the query named, with every name it goes by (lower-cased, alias-expanded). */
export interface AskedSubject {
  /** As the query named it. */
  asked: string;
  /** Lower-cased canonical subject: the hint's key. */
  canonical: string;
  names: readonly string[];
}

export interface RecallMisses {
  /** Subjects with nothing about them rendered: one more miss each. */
  missed: { key: string; subject: string }[];
  /** Subjects that were answered: their hints are cleared. */
  answered: string[];
}

/**
 * Which named subjects the recall missed. A subject is answered when any
 * rendered belief (blocked ones too: they exist, formation cannot fix them
 * by re-deriving) is about it under any of its names; the relevance floor
 * has already decided what was rendered.
 */
export function recallMisses(asked: readonly AskedSubject[], renderedSubjects: readonly string[]): RecallMisses {
  const rendered = new Set(renderedSubjects.map((s) => s.toLowerCase()));
  const missed = new Map<string, string>();
  const answered = new Set<string>();
  for (const s of asked) {
    if (s.names.some((n) => rendered.has(n.toLowerCase()))) answered.add(s.canonical);
    else if (!missed.has(s.canonical)) missed.set(s.canonical, s.asked);
  }
  for (const key of answered) missed.delete(key);
  return {
    missed: [...missed].map(([key, subject]) => ({ key, subject })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    answered: [...answered].sort(),
  };
}

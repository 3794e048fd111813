import type { ConfidenceBand, StoredBelief } from "../domain/model.js";
import type { ProfileWeights, RetrievalPolicy } from "./policy.js";

/**
 * Step 5: the hand-weighted, versioned ranking function.
 *
 *   score = w_match·match + w_conf·conf + w_reinforce·reinforce + w_authority·authority
 *         + w_scope·scope_affinity + w_utility·utility − w_penalty·penalty
 *
 * Each feature is a small pure function of the belief, the query's scope and
 * the reference time (the rendered as_of, never the wall clock, so the same
 * belief set always ranks the same).
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

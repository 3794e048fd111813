import type { Belief, RejectionKind } from "./model.js";

/**
 * Rejections are durable events, and every write of a belief replays them:
 * a re-derivation that re-emits a rejected belief (say after a formation
 * policy upgrade) gets the same correction applied again, so a rejected belief
 * never returns. Pure: the store passes the belief and its rejections.
 */

/** A recorded rejection as replay needs it: its kind and, for CHANGED, when the correction took over. */
export interface RecordedRejection {
  kind: RejectionKind;
  correctedAt?: Date | null;
}

export function applyRejections(belief: Belief, rejections: readonly (RejectionKind | RecordedRejection)[]): Belief {
  let out = belief;
  for (const r of rejections) {
    const { kind, correctedAt } = typeof r === "string" ? { kind: r, correctedAt: null } : r;
    out = applyRejection(out, kind, correctedAt ?? null);
  }
  return out;
}

export function applyRejection(belief: Belief, kind: RejectionKind, correctedAt: Date | null = null): Belief {
  switch (kind) {
    case "not_true":
      // Retired: it never held as far as live recall is concerned.
      return { ...belief, status: "expired" };
    case "changed": {
      // Superseded by the correction, and it stopped holding when the correction began.
      const closes = belief.validTo === null && correctedAt !== null && correctedAt.getTime() > belief.validFrom.getTime();
      return { ...belief, status: "superseded", validTo: closes ? correctedAt : belief.validTo };
    }
    case "not_here":
      // True where it was learned, not elsewhere: it stops carrying.
      return { ...belief, portability: "local", scopeLevel: "project" };
    case "unspecified":
      // Ambiguous: flag for review and down-weight, never retire.
      return { ...belief, flaggedForReview: true };
  }
}

import type { Belief, RejectionKind } from "./model.js";

/**
 * Rejections are durable events, and every write of a belief replays them:
 * a re-derivation that re-emits a rejected belief (say after a formation
 * policy upgrade) gets the same correction applied again, so a rejected belief
 * never returns. Pure: the store passes the belief and its rejections.
 */
export function applyRejections(belief: Belief, kinds: readonly RejectionKind[]): Belief {
  let out = belief;
  for (const kind of kinds) out = applyRejection(out, kind);
  return out;
}

export function applyRejection(belief: Belief, kind: RejectionKind): Belief {
  switch (kind) {
    case "not_true":
      // Retired: it never held as far as live recall is concerned.
      return { ...belief, status: "expired" };
    case "changed":
      // Superseded by the correction written alongside the rejection.
      return { ...belief, status: "superseded" };
    case "not_here":
      // True where it was learned, not elsewhere: it stops carrying.
      return { ...belief, portability: "local", scopeLevel: "project" };
    case "unspecified":
      // Ambiguous: flag for review and down-weight, never retire.
      return { ...belief, flaggedForReview: true };
  }
}

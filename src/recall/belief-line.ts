import type { StoredBelief } from "../domain/model.js";
import type { RetrievalPolicy } from "./policy.js";
import { confidenceBand } from "./rank.js";
import type { RenderLine } from "./render.js";
import { scanStatement, withheldText } from "./safety.js";

/**
 * The line one belief renders as: the safety verdict (step 7), its band, the
 * origin attribution of a carried belief and the conflict marker. The
 * pipeline builds every line through this, and re-rendering a trace
 * (trace/rerender.ts) builds them the same way, so a trace's belief ids
 * reproduce the exact bytes its hash covers.
 */
export function beliefLine(
  belief: StoredBelief,
  carried: boolean,
  conflictsWith: readonly string[],
  policy: RetrievalPolicy,
): RenderLine {
  const verdict = scanStatement(belief.statement, belief.beliefType);
  return {
    beliefId: belief.beliefId,
    statement: belief.statement,
    authority: belief.authority,
    band: confidenceBand(belief, carried, policy),
    learnedIn: carried ? belief.originScope : null,
    conflictsWith,
    withheld: verdict.ok ? null : withheldText(verdict.reason),
  };
}

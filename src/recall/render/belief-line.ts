import type { StoredBelief } from "../../domain/model.js";
import type { RetrievalPolicy } from "../policy.js";
import { confidenceBand } from "../rank/rank.js";
import type { RenderLine } from "./render.js";
import type { SafetyVerdict } from "../../domain/safety-finding.js";
import { withheldText } from "../safety/safety.js";

/**
 * The line one belief renders as: its safety verdict (step 7, from
 * scanStatements, which is asynchronous and scans a recall's statements in
 * one pass), its band, the
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
  verdict: SafetyVerdict,
): RenderLine {
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

import type { RecallTrace, StoredBelief } from "../domain/model.js";
import { beliefLine } from "../recall/render/belief-line.js";
import { asHeldThen, isHistorical } from "../domain/hard-filter.js";
import { RETRIEVAL_POLICY, type RetrievalPolicy } from "../recall/policy.js";
import { isCarried } from "../recall/rank/rank.js";
import { renderBlock } from "../recall/render/render.js";
import { scanStatements } from "../recall/safety/safety.js";

/**
 * Trace faithfulness: the belief ids a trace lists, rendered again with the
 * trace's as_of and retrieval policy, must give exactly the bytes whose hash
 * the trace holds. This is the check, not a way to answer "what did the
 * agent know": beliefs change after the fact, which is why the trace is
 * recorded in the render pass and never reconstructed.
 */

/** Policies that can re-render their own traces, by version. */
const POLICIES: ReadonlyMap<string, RetrievalPolicy> = new Map([[RETRIEVAL_POLICY.version, RETRIEVAL_POLICY]]);

export function policyForVersion(version: string): RetrievalPolicy {
  // A query that used the ownership lookup or the semantic arm records their tags after the policy's version.
  const policy = POLICIES.get(version.replace(RETRIEVAL_POLICY.ownedResources.tag, "").replace(RETRIEVAL_POLICY.semanticTag, ""));
  if (!policy) throw new Error(`no retrieval policy ${version} to re-render with`);
  return policy;
}

/** Renders the trace's returned beliefs, in its order, as the pipeline rendered them. */
export async function rerender(
  trace: RecallTrace,
  beliefs: readonly StoredBelief[],
  policy = policyForVersion(trace.retrievalPolicyVersion),
): Promise<string> {
  const byId = new Map(beliefs.map((b) => [b.beliefId, b]));
  // As the pipeline did: a historical query bands each belief with the lifecycle it had at as_of.
  const historical = isHistorical(trace.query, trace.createdAt);
  const returned = trace.returned.map((id) => {
    const belief = byId.get(id);
    if (!belief) throw new Error(`belief ${id} of trace ${trace.id} is missing`);
    return asHeldThen(belief, historical);
  });
  const verdicts = await scanStatements(returned);
  const lines = returned.map((b, i) => {
    // Conflict partners are linked in either direction; the pipeline admits partners together,
    // so a rendered belief's marker names exactly its partners among the rendered ones.
    const partners = returned
      .filter((o) => o.beliefId !== b.beliefId && (b.conflictsWith.includes(o.beliefId) || o.conflictsWith.includes(b.beliefId)))
      .map((o) => o.beliefId)
      .sort();
    return beliefLine(b, isCarried(b, trace.query.currentScope), partners, policy, verdicts[i]!);
  });
  // The header names the version as recorded (with the ownership and semantic tags, when the recall had them).
  const tagged = [policy.version, `${policy.version}${policy.ownedResources.tag}`].flatMap((v) => [v, `${v}${policy.semanticTag}`]);
  const version = tagged.includes(trace.retrievalPolicyVersion) ? trace.retrievalPolicyVersion : policy.version;
  return renderBlock(trace.asOf, version, lines, trace.query.knownAt);
}

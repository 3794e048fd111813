import { describe, expect, it } from "vitest";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { ascendingUuids, useStore } from "./store-helpers.js";

/**
 * The near-duplicate penalty end to end: a near restatement of a
 * higher-ranked belief drops below a distinct second fact about the same
 * subject, and is still in the block (demoted, never deleted); an exact
 * restatement is still trimmed.
 */
describe.each(STORE_KINDS)("near-duplicate penalty through the pipeline ($kind)", ({ open }) => {
  const store = useStore(open);

  it("demotes the near duplicate below a distinct fact, keeps it, and trims the exact restatement", async () => {
    const p = newPrincipal();
    const [first, second, third, fourth] = ascendingUuids(4);
    const writing = belief({ beliefId: first, statement: "Andy prefers concise, prose-first writing.", confidence: 0.95 });
    const again = belief({ beliefId: second, statement: "Andy prefers concise prose-first writing in reviews.", confidence: 0.95 });
    const copy = belief({ beliefId: third, statement: "andy prefers concise,  prose-first writing.", confidence: 0.95 });
    const berlin = belief({ beliefId: fourth, statement: "Andy works from Berlin.", beliefType: "user_model_attr", confidence: 0.85 });
    await store().putBeliefs(p, [berlin, copy, again, writing]);

    const { result, trace } = await runRecall(pipelineDeps(store(), { record: async () => {} }), p, requested({ subjects: ["Andy"] }));
    expect(result.items.map((i) => i.beliefId)).toEqual([writing.beliefId, berlin.beliefId, again.beliefId]);
    const [w, b, a] = result.items;
    expect(b!.score).toBeGreaterThan(a!.score);
    expect(w!.score - a!.score).toBeCloseTo(0.3 * 0.5, 9);
    expect(trace.ranked!.map((r) => r.beliefId)).not.toContain(copy.beliefId);
  });
});

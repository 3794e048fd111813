import { describe, expect, it } from "vitest";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { useStore } from "./store-helpers.js";

/**
 * The relevance floor's relative part through the pipeline, on both stores
 * (relative-floor.ts): what shares only a word with the question is held
 * back, and a type anchor adds nothing once the question's words have found
 * a belief of its type. Held back means below the floor: still ranked, in
 * the trace, never dropped for budget.
 */
describe.each(STORE_KINDS)("relative relevance floor ($kind)", ({ open }) => {
  const store = useStore(open);
  const deps = () => pipelineDeps(store(), { record: async () => {} });

  // The demo's beliefs about Andy: the maintainer one is the most corroborated and ranked first.
  const helix = belief({ statement: "Andy's editor is Helix.", beliefType: "preference", scopeLevel: "user" });
  const maintainer = belief({ statement: "Andy is the maintainer of veetbot.", beliefType: "user_model_attr", confidence: 0.95, evidenceCount: 5, scopeLevel: "user" });
  const berlin = belief({ statement: "Andy works from Berlin and keeps European hours.", beliefType: "user_model_attr", evidenceCount: 3, scopeLevel: "user" });
  const concise = belief({ statement: "Andy prefers concise, prose-first writing.", confidence: 0.95, evidenceCount: 6, scopeLevel: "user" });

  it("the editor case: the editor belief comes first and alone; what matches only the name is held back", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [helix, maintainer, berlin, concise]);
    const { result, trace } = await runRecall(deps(), p, requested({ text: "what editor does Andy use" }));
    expect(result.items.map((i) => i.statement)).toEqual([helix.statement]);
    // Ranked and traced, counted below the floor rather than dropped for budget.
    expect(trace.ranked!.map((r) => r.beliefId)).toEqual(expect.arrayContaining([maintainer.beliefId, berlin.beliefId, concise.beliefId]));
    expect(trace.droppedForBudget).toEqual([]);
    expect(trace.consideredNotShown).toBe(3);
  });

  it("min_score 0 is no floor at all: the same question then renders every match", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [helix, maintainer, berlin, concise]);
    const { result } = await runRecall(deps(), p, requested({ text: "what editor does Andy use", minScore: 0 }));
    expect(result.items.map((i) => i.beliefId).sort()).toEqual([helix, maintainer, berlin, concise].map((b) => b.beliefId).sort());
  });

  it("the coffee case: the anchor adds no other preference once the words found the coffee one", async () => {
    const p = newPrincipal();
    const coffee = belief({ statement: "Andy takes his coffee black, no sugar.", predicateKey: "coffee" });
    const tabs = belief({ statement: "Andy indents with tabs.", evidenceCount: 4 });
    const padel = belief({ statement: "Andy plays padel on Thursday evenings.", evidenceCount: 2 });
    await store().putBeliefs(p, [coffee, tabs, padel]);
    const { result, trace } = await runRecall(deps(), p, requested({ text: "How do I take my coffee?" }));
    expect(trace.query.structuredBeliefTypes).toEqual(["preference"]);
    expect(result.items.map((i) => i.beliefId)).toEqual([coffee.beliefId]);
    expect(trace.ranked!.map((r) => r.beliefId).sort()).toEqual([coffee.beliefId, tabs.beliefId, padel.beliefId].sort());
  });

  it("a named subject keeps its beliefs whatever their lexical score", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [helix, maintainer, berlin, concise]);
    const { result } = await runRecall(deps(), p, requested({ text: "what editor does Andy use", subjects: ["Andy"] }));
    expect(result.items.map((i) => i.beliefId).sort()).toEqual([helix, maintainer, berlin, concise].map((b) => b.beliefId).sort());
  });
});

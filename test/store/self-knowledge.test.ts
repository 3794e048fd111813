import { describe, expect, it } from "vitest";
import type { Belief } from "../../src/domain/model.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { lexicalTerms } from "../../src/recall/query-former.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { useStore } from "./store-helpers.js";

/**
 * A self-knowledge question anchors the structured arm to the requested type
 * (query former): a paraphrased preference that shares no content word with
 * "How do I like my coffee?" is found, and a flood of louder personal beliefs
 * of other types cannot crowd it out of the candidate cap.
 */
describe.each(STORE_KINDS)("self-knowledge anchors through the pipeline ($kind)", ({ open }) => {
  const store = useStore(open);
  const QUESTION = "How do I like my coffee?";
  const cap = RETRIEVAL_POLICY.candidateCap;

  // Quieter than the flood on every tie-break of the structured arm (authority, confidence, evidence).
  const coffee = belief({
    subject: "Andy",
    statement: "Andy takes espresso black, without sugar.",
    beliefType: "preference",
    authority: "affirmed",
    confidence: 0.8,
  });
  const flood: Belief[] = Array.from({ length: cap + 50 }, (_, i) =>
    belief({
      subject: "Andy",
      statement: i % 2 === 0 ? `Andy owns gadget number ${i}.` : `Andy's friend number ${i} lives nearby.`,
      beliefType: i % 2 === 0 ? "user_model_attr" : "relationship",
      authority: "user",
      confidence: 1,
      evidenceCount: 5,
    }),
  );
  // Lexical matches for the question's words, about something else.
  const machine = belief({ subject: "office", statement: "The office coffee machine is broken.", beliefType: "project_fact" });

  async function loaded() {
    const p = newPrincipal();
    await store().putBeliefs(p, [coffee, machine, ...flood]);
    return p;
  }
  const deps = () => pipelineDeps(store(), { record: async () => {} });

  it("the fixture is a paraphrase: no content word in common with the question", () => {
    const asked = new Set(lexicalTerms(QUESTION));
    expect(lexicalTerms(coffee.statement).filter((t) => asked.has(t))).toEqual([]);
  });

  it.each(["in_turn", "child_run", "search"] as const)("%s: finds the paraphrased preference and records the anchor", async (kind) => {
    const p = await loaded();
    const { result, trace } = await runRecall(deps(), p, requested({ text: QUESTION }), { kind });
    expect(trace.query.structuredBeliefTypes).toEqual(["preference"]);
    const item = result.items.find((i) => i.beliefId === coffee.beliefId);
    expect(item, result.rendered).toBeDefined();
    expect(item!.arms).toEqual(["structured"]);
    expect(result.rendered).toContain(coffee.statement);
    // Only the requested type is anchored: none of the flood is a candidate.
    const floodIds = new Set(flood.map((b) => b.beliefId));
    expect(trace.ranked!.filter((b) => floodIds.has(b.beliefId))).toEqual([]);
  });

  it("control: anchoring every personal type lets the louder flood fill the candidate cap", async () => {
    const p = await loaded();
    const { result, trace } = await runRecall(
      deps(),
      p,
      requested({ text: QUESTION, structuredBeliefTypes: ["preference", "relationship", "user_model_attr"] }),
    );
    expect(trace.ranked!.some((b) => b.beliefId === coffee.beliefId)).toBe(false);
    expect(result.items.some((i) => i.beliefId === coffee.beliefId)).toBe(false);
  });

  it("a generic how-to question does not activate it", async () => {
    const p = await loaded();
    const { result, trace } = await runRecall(deps(), p, requested({ text: "How do I deploy this service?" }));
    expect(trace.query.structuredBeliefTypes).toEqual([]);
    expect(result.items.some((i) => i.beliefId === coffee.beliefId)).toBe(false);
  });

  it("nor does an advice question", async () => {
    const p = await loaded();
    const { result, trace } = await runRecall(deps(), p, requested({ text: "Which coffee machine should I buy?" }));
    expect(trace.query.structuredBeliefTypes).toEqual([]);
    expect(result.items.some((i) => i.beliefId === coffee.beliefId)).toBe(false);
  });

  it("another principal's preference is never a candidate", async () => {
    await loaded();
    const other = newPrincipal();
    const { result, trace } = await runRecall(deps(), other, requested({ text: QUESTION }));
    expect(trace.ranked).toEqual([]);
    expect(result.items).toEqual([]);
  });
});

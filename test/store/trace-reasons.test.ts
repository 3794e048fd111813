import { describe, expect, it } from "vitest";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, runRecall, traceWriter } from "../support/pipeline.js";
import { explainTrace } from "../../src/trace/trace-explanation.js";
import { useStore } from "./store-helpers.js";

/**
 * Every candidate a recall considers and does not render has one exact
 * reason, recorded in the trace in the render pass (not reconstructed), and
 * the stored trace reads it back: collapse's (an older revision, a
 * restatement, the per-subject cap) and assembly's (the floor, its relative
 * part, the item cap, the budget).
 */
describe.each(STORE_KINDS)("why each candidate was not shown ($kind)", ({ open }) => {
  const store = useStore(open);

  it("records one reason per candidate left out, and the stored trace gives them back", async () => {
    const p = newPrincipal();
    const svc = (statement: string, extra: Parameters<typeof belief>[0] = {}) =>
      belief({ subject: "billing", statement, beliefType: "project_fact", portability: "contextual", ...extra });
    const oldRevision = svc("Billing runs on Postgres 14.", { predicateKey: "database", validFrom: new Date("2025-01-01T00:00:00Z") });
    const newRevision = svc("Billing runs on Postgres 16.", { predicateKey: "database", validFrom: new Date("2026-01-01T00:00:00Z"), evidenceCount: 5 });
    const copy = svc("Billing deploys every Tuesday.", { evidenceCount: 4 });
    const restated = svc("Billing  deploys every tuesday.");
    const more = [1, 2, 3].map((i) => svc(`Billing keeps ${i} replicas in region ${i}.`));
    await store().putBeliefs(p, [oldRevision, newRevision, copy, restated, ...more]);
    const { logger } = capturingLogger();
    const writer = traceWriter(store(), logger);
    const deps = pipelineDeps(store(), writer);
    const { trace } = await runRecall(deps, p, requested({ text: "how does billing run and deploy", subjects: ["billing"], maxItems: 4 }));
    await writer.flush();

    const reasons = new Map((trace.notShown ?? []).map((n) => [n.beliefId, n.reason]));
    expect(reasons.get(oldRevision.beliefId)).toBe("superseded");
    expect(reasons.get(restated.beliefId)).toBe("restatement");
    // A per-subject cap of 3 for 4 items: the rest of billing's beliefs are capped, not "hidden".
    expect([...reasons.values()]).toContain("subject_cap");
    // Exactly one reason for each candidate considered and not shown.
    expect(reasons.size).toBe(trace.notShown!.length);
    expect(trace.notShown!.length).toBe(trace.consideredNotShown);
    for (const id of trace.returned) expect(reasons.has(id)).toBe(false);

    const back = await store().getTrace(p, trace.id);
    expect(back!.notShown).toEqual(trace.notShown);
    const explained = explainTrace(back!);
    expect(explained.reasonsRecorded).toBe(true);
    expect(explained.considered.map((c) => c.outcome)).not.toContain("unrecorded");
    expect(explained.considered).toHaveLength(trace.returned.length + trace.consideredNotShown);
  });

  it("names the floor, its relative part, the item cap and the budget", async () => {
    const p = newPrincipal();
    const helix = belief({ statement: "Andy's editor is Helix.", beliefType: "preference", scopeLevel: "user" });
    const maintainer = belief({ statement: "Andy is the maintainer of veetbot.", beliefType: "user_model_attr", confidence: 0.95, evidenceCount: 5, scopeLevel: "user" });
    const editors = [1, 2, 3].map((i) => belief({ subject: `editor ${i}`, statement: `Editor number ${i} is what Andy's editor plugin targets.`, beliefType: "project_fact" }));
    await store().putBeliefs(p, [helix, maintainer, ...editors]);
    const deps = pipelineDeps(store(), { record: async () => {} });
    const floor = await runRecall(deps, p, requested({ text: "what editor does Andy use" }));
    expect(new Map(floor.trace.notShown!.map((n) => [n.beliefId, n.reason])).get(maintainer.beliefId)).toBe("relative_floor");
    const capped = await runRecall(deps, p, requested({ text: "what editor does Andy use", subjects: ["Andy"], maxItems: 1, minScore: 0 }));
    expect(new Set(capped.trace.notShown!.map((n) => n.reason))).toEqual(new Set(["item_cap"]));
    const tight = await runRecall(deps, p, requested({ text: "what editor does Andy use", subjects: ["Andy"], budgetTokens: 60, minScore: 0 }));
    expect(tight.trace.notShown!.map((n) => n.reason)).toContain("budget");
  });
});

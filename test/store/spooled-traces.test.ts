import { describe, expect, it } from "vitest";
import type { Principal, RecallTrace } from "../../src/domain/model.js";
import { decodePayload, encodeRecord, parseHeader } from "../../src/trace/spool-record.js";
import { joinRankedTexts } from "../../src/trace/spooled-ranked.js";
import { traceView } from "../../src/trace/trace-view.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { useStore } from "./store-helpers.js";

/**
 * Issue 44, item 2: a trace spooled through an outage keeps its ranked list
 * as ids, scores and a hash of the texts; the texts are joined back from the
 * beliefs table, under the trace's own principal, before it is written. The
 * stored trace is the one the recall made, on both stores.
 */

/** Through the spool's framing and back, texts joined from the store. */
async function throughSpool(store: ReturnType<ReturnType<typeof useStore>>, p: Principal, trace: RecallTrace) {
  const record = encodeRecord({ principal: p, trace });
  const headerEnd = record.indexOf(10);
  const header = parseHeader(record.subarray(0, headerEnd))!;
  const decoded = decodePayload(header, record.subarray(headerEnd + 1, record.length - 1));
  return joinRankedTexts([decoded], (principal, ids) => store.traces.beliefTexts(principal, ids));
}

describe.each(STORE_KINDS)("traces replayed from the outage spool ($kind)", ({ open }) => {
  const store = useStore(open);

  async function recalled(p: Principal) {
    const traces: RecallTrace[] = [];
    const deps = pipelineDeps(store(), { record: async (_p, t) => void traces.push(t) });
    const memory = Array.from({ length: 6 }, (_, i) => belief({ subject: "veetbot", statement: `veetbot deploy step ${i}: ${"canary then rollout ".repeat(40)}` }));
    await store().putBeliefs(p, memory);
    const outcome = await runRecall(deps, p, requested({ text: "veetbot deploy canary rollout" }), { turnId: "t1" });
    return { trace: traces[0]!, outcome, memory };
  }

  it("writes the trace the recall made: ranked texts, hash of the bytes, user view", async () => {
    const p = newPrincipal();
    const { trace, outcome } = await recalled(p);
    expect(trace.ranked!.length).toBeGreaterThan(1);
    const { batch, unmatched } = await throughSpool(store(), p, trace);
    expect(unmatched).toBe(0);
    await store().traces.recordBatch(batch);
    const stored = (await store().getTrace(p, trace.id))!;
    expect(stored.ranked).toEqual(trace.ranked);
    expect(stored.renderedSha256).toBe(trace.renderedSha256);
    expect(stored.returned).toEqual(outcome.result.items.map((i) => i.beliefId));
    const view = (await traceView(store().traces, p, "t1", trace.sensitivityCeiling))!;
    expect(view.beliefs.map((b) => b.statement)).toEqual(outcome.result.items.map((i) => i.statement));
  });

  it("joins texts under the trace's own principal only, and never texts a belief was not ranked with", async () => {
    const p = newPrincipal();
    const { trace, memory } = await recalled(p);
    const ids = memory.map((b) => b.beliefId);
    // Another principal of the tenant, and the same principal id in another tenant: nothing.
    expect((await store().traces.beliefTexts({ tenantId: p.tenantId, principalId: "someone-else" }, ids)).size).toBe(0);
    expect((await store().traces.beliefTexts({ tenantId: "another-tenant", principalId: p.principalId }, ids)).size).toBe(0);
    expect((await store().traces.beliefTexts(p, ids)).size).toBe(ids.length);
    // A belief rewritten between the recall and the replay: its item is written without texts.
    const rewritten = memory.find((b) => b.beliefId === trace.ranked![0]!.beliefId)!;
    await store().putBeliefs(p, [{ ...rewritten, statement: "veetbot deploys by hand now." }]);
    const { batch, unmatched } = await throughSpool(store(), p, trace);
    expect(unmatched).toBe(1);
    expect(batch[0]!.trace.ranked![0]).toMatchObject({ beliefId: rewritten.beliefId, subject: "", statement: "" });
    expect(batch[0]!.trace.ranked!.slice(1)).toEqual(trace.ranked!.slice(1));
  });
});

import { describe, expect, it } from "vitest";
import { SENSITIVITY, type RecallContext } from "../../src/domain/model.js";
import { recall } from "../../src/recall/pipeline.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, traceWriter } from "../support/pipeline.js";
import { useStore } from "./store-helpers.js";

/**
 * Issue 38, item 5: a recall cancelled by its caller stops its work at the
 * next step, even when the cancel arrives after the arms are done (with the
 * in-process index they take about a millisecond): it is neither ranked to
 * the end nor traced, because its block never reaches the model.
 */

describe.each(STORE_KINDS)("a cancelled recall ($kind)", ({ open }) => {
  const store = useStore(open);

  it("records no trace when cancelled after its arms finished", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief({ subject: "veetbot", statement: "veetbot deploys to Fly.io." })]);
    const { logger } = capturingLogger();
    const traces = traceWriter(store(), logger);
    const cancel = new AbortController();
    let armsDone = 0;
    const deps = {
      ...pipelineDeps(store(), traces),
      // The caller goes away the moment the last arm has answered.
      armObserver: {
        wrap: (arm: Parameters<NonNullable<ReturnType<typeof pipelineDeps>["armObserver"]>["wrap"]>[0]) => arm,
        outcome: () => {
          if (++armsDone === 2) cancel.abort(new Error("client cancelled"));
        },
      },
    };
    const context: RecallContext = {
      moment: "in_turn",
      sessionType: "interactive",
      contextWindowTokens: 0,
      snapshotWatermark: null,
      sessionId: "s-1",
      runId: "run-1",
      turnId: "t-1",
      surface: { surfaceId: "cli", sensitivityCeiling: SENSITIVITY.restricted },
    };
    const pipeline = recall(deps, { principal: p, query: requested({ text: "how does veetbot deploy" }), context, kind: "in_turn", deadlineAt: Date.now() + 10_000, signal: cancel.signal });
    const run = async () => {
      let step = await pipeline.next();
      while (!step.done) step = await pipeline.next();
      return step.value;
    };
    await expect(run()).rejects.toThrow("client cancelled");
    expect(armsDone).toBe(2);
    expect(traces.backlog).toBe(0);
    expect(traces.metrics.written).toBe(0);
  });
});

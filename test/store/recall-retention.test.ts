import v8 from "node:v8";
import vm from "node:vm";
import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { Principal, RecallTrace } from "../../src/domain/model.js";
import { MemoryService, RecallRequestSchema } from "../../src/gen/memory/v1/memory_service_pb.js";
import { Moment } from "../../src/gen/memory/v1/types_pb.js";
import { recall, type PipelineDeps, type TraceRecorder } from "../../src/recall/pipeline.js";
import { identityInterceptor } from "../../src/server/identity/identity.js";
import { memoryService } from "../../src/server/memory-service.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested } from "../support/pipeline.js";
import { STORE_KINDS } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

/**
 * A finished recall lets go of what it built, though its call's signal and
 * context live on: connect-node keeps them until V8's next full collection
 * (docs/adr/0001). Whatever they reach lives as long, copied by every
 * young-generation collection on the way, and it once reached every call's
 * trace and ranked list: the arms' wait added a listener to the call's
 * signal at every turn, the listener reached the arms' abort controller, its
 * reason was an Error made per recall, and an Error's captured stack holds the
 * async frames' generators, the pipeline's among them, which holds what it
 * last awaited (the outcome).
 */

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** A recorder that keeps only weak references to the traces it is given. */
function weakRecorder(): TraceRecorder & { traces: WeakRef<RecallTrace>[] } {
  const traces: WeakRef<RecallTrace>[] = [];
  return { traces, record: async (_p, trace) => void traces.push(new WeakRef(trace)) };
}

/** Whether `ref` still reaches its object after full collections (in a later turn: a WeakRef keeps its target for the turn it was made in). */
async function survives(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return ref.deref() !== undefined;
}

/** Drains a recall, keeping nothing of it but its item count (a test's own locals would hold the outcome). */
async function itemCount(pipeline: ReturnType<typeof recall>): Promise<number> {
  let step = await pipeline.next();
  while (!step.done) step = await pipeline.next();
  return step.value.result.items.length;
}

describe.each(STORE_KINDS)("a finished recall's retention ($kind)", ({ open }) => {
  const store = useStore(open);

  async function seeded(): Promise<{ p: Principal; deps: PipelineDeps & { traces: ReturnType<typeof weakRecorder> } }> {
    const p = newPrincipal("retention");
    await store().putBeliefs(p, [
      belief({ subject: "Andy", statement: "Andy prefers green tea." }),
      belief({ subject: "Andy", statement: "Andy drives a red bike." }),
    ]);
    return { p, deps: { ...pipelineDeps(store(), weakRecorder()), traces: weakRecorder() } };
  }

  it("the pipeline's trace is collectable once the recall is done, while the call's signal lives on", async () => {
    const { p, deps } = await seeded();
    const call = new AbortController();
    let pipeline: ReturnType<typeof recall> | null = recall(deps, {
      principal: p,
      query: requested({ text: "what does Andy drink" }),
      context: {
        moment: "in_turn",
        sessionType: "interactive",
        contextWindowTokens: 0,
        snapshotWatermark: null,
        sessionId: "",
        runId: "",
        turnId: "",
        surface: { surfaceId: "cli", sensitivityCeiling: 4 },
      },
      kind: "in_turn",
      deadlineAt: Date.now() + 10_000,
      signal: call.signal,
    });
    const items = await itemCount(pipeline);
    pipeline = null;
    expect(items).toBeGreaterThan(0);
    expect(deps.traces.traces).toHaveLength(1);
    expect(await survives(deps.traces.traces[0]!)).toBe(false);
    expect(call.signal.aborted).toBe(false);
  });

  it("the Recall handler's trace is collectable once the call is done, while its context lives on", async () => {
    const { p, deps } = await seeded();
    const contextValues = createContextValues();
    // The identity interceptor puts the caller in the call's context values, as for a real call.
    await identityInterceptor(async () => p)(async () => undefined as never)({
      service: MemoryService,
      contextValues,
      header: new Headers(),
    } as never);
    const ctx = createHandlerContext({
      service: MemoryService,
      method: MemoryService.method.recall,
      protocolName: "grpc",
      requestMethod: "POST",
      url: "http://127.0.0.1/memory.v1.MemoryService/Recall",
      timeoutMs: 10_000,
      contextValues,
    });
    const service = memoryService({ ...deps, defaultSensitivityCeiling: "restricted", deadline: { defaultMs: 10_000, maxMs: 60_000 } });
    let handler: AsyncIterator<unknown> | null = service.recall(
      create(RecallRequestSchema, { moment: Moment.IN_TURN, query: { currentScope: "veetbot", text: "what does Andy drink" } }),
      ctx,
    )[Symbol.asyncIterator]();
    const events: string[] = [];
    for (let next = await handler.next(); !next.done; next = await handler.next()) {
      events.push(String((next.value as { event?: { case?: string } }).event?.case));
    }
    handler = null;
    expect(events.at(-1)).toBe("result");
    expect(deps.traces.traces).toHaveLength(1);
    expect(await survives(deps.traces.traces[0]!)).toBe(false);
    expect(ctx.signal.aborted).toBe(false);
  });
});

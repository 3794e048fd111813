import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, metadata, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** Partial results at the deadline, and cancellation, with an arm made slow on purpose, on both stores. */
describe.each(["pglite", "postgres"] as const)("deadlines and cancellation (%s)", (kind) => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const fact = beliefMsg({ subject: "harbour", statement: "The harbour ferry leaves at seven.", belief_type: "project_fact" });

  beforeAll(async () => {
    // The lexical arm starts 6 s late: far past the 3 s deadline below, whose margin (200 ms, the
    // most the policy allows) leaves a loaded CI machine room to rank, trace and reply.
    sidecar = await startSidecarProcess(kind, { RECALL_FAULT_ARM_DELAY: "lexical=6000" });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [fact] }, me);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("answers before the client's deadline with the late arm named as degraded", async () => {
    // A result that missed the deadline would fail this call with DEADLINE_EXCEEDED.
    const events = await serverStream(c.memory, "Recall", { query: { text: "harbour ferry", subjects: ["harbour"] } }, me, 3000);
    const arms = events.filter((e) => e.event === "arm").map((e) => e.arm);
    expect(arms.find((a) => a.arm === "structured")).toMatchObject({ degraded: false });
    expect(arms.find((a) => a.arm === "lexical")).toMatchObject({ degraded: true, candidates: [] });
    const result = events[events.length - 1]!.result as Json;
    expect(result.arms_degraded).toEqual(["lexical"]);
    // Partial, not empty: the structured arm's candidate is ranked and rendered.
    expect(result.items.map((i: Json) => i.belief_id)).toEqual([fact.belief_id]);
  });

  it("stops the work when the client cancels", async () => {
    const call = c.memory.Recall({ query: { text: "harbour ferry" } }, metadata(me));
    call.on("error", () => {});
    call.on("data", () => {});
    await new Promise((r) => setTimeout(r, 200));
    call.cancel();
    // The server logs the call as cancelled once the pipeline has stopped, well before the slow arm would finish.
    const logged = await new Promise<Json>((resolve, reject) => {
      const deadline = Date.now() + 5000;
      const poll = () => {
        const line = sidecar
          .logs()
          .split("\n")
          .filter((l) => l.includes('"method":"memory.v1.MemoryService/Recall"'))
          .map((l) => JSON.parse(l) as Json)
          .find((l) => l.code === "CANCELLED");
        if (line) resolve(line);
        else if (Date.now() > deadline) reject(new Error(`no cancelled call in the log:\n${sidecar.logs()}`));
        else setTimeout(poll, 50);
      };
      poll();
    });
    expect(logged.durationMs).toBeGreaterThan(0);
  });

});

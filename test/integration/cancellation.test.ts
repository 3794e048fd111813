import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, metadata, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 38, item 5: a Recall the client cancels stops its work. Its held arm
 * (RECALL_FAULT_ARM_DELAY) is abandoned at the cancel, not run to the end,
 * and the call records no trace: its block never reached the model.
 */

type Json = Record<string, unknown>;
const ARM_DELAY_MS = 4000;

describe("a cancelled Recall (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", { RECALL_FAULT_ARM_DELAY: `lexical=${ARM_DELAY_MS}` });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "veetbot deploys to Fly.io." })] }, me);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const logLines = () =>
    sidecar
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Json);

  it("abandons the arms at the cancel and records no trace", async () => {
    const tracesBefore = logLines().filter((l) => l.msg === "memory.recalled").length;
    const call = c.memory.Recall({ query: { text: "how does veetbot deploy" }, moment: "MOMENT_IN_TURN" }, metadata(me), { deadline: Date.now() + 20_000 });
    const events: Json[] = [];
    call.on("data", (e: Json) => events.push(e));
    const ended = new Promise<void>((resolve) => {
      call.on("error", () => resolve());
      call.on("end", () => resolve());
    });
    // The structured arm answers at once; the lexical one is held.
    await new Promise((r) => setTimeout(r, 500));
    call.cancel();
    await ended;
    // Long enough for the held arm to have finished and its trace to be written, had the work gone on.
    await new Promise((r) => setTimeout(r, ARM_DELAY_MS + 1000));
    const line = logLines().find((l) => l.method === "memory.v1.MemoryService/Recall");
    expect(line, sidecar.logs().slice(-3000)).toMatchObject({ code: "CANCELLED" });
    expect(line!.durationMs as number).toBeLessThan(ARM_DELAY_MS);
    expect(line!.traceId).toBeUndefined();
    // Had the held arm run on, the recall would have finished after it and written its trace.
    expect(logLines().filter((l) => l.msg === "memory.recalled").length).toBe(tracesBefore);
  });
});

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The sidecar serves without promise hooks: on Node 20 an entered
 * AsyncLocalStorage (as the store deadline once was) hooks every promise the
 * process makes, a quarter of a millisecond of each in-turn recall (ADR
 * 0003). The store deadline is carried explicitly instead; this keeps it so.
 */
const PROBE = fileURLToPath(new URL("../support/promise-hook-probe.mjs", import.meta.url));
const LOADED = "promise-hook-probe: loaded";
const HOOKS_ON = "promise-hook-probe: promise hooks are on";

describe("promise hooks", () => {
  it("the probe sees an entered AsyncLocalStorage", () => {
    const script = (enter: boolean) =>
      `import { AsyncLocalStorage } from "node:async_hooks";
       setTimeout(() => { if (${enter}) new AsyncLocalStorage().run(1, () => {}); }, 50);
       setTimeout(() => {}, 400);`;
    const run = (enter: boolean) =>
      spawnSync(process.execPath, ["--import", PROBE, "--input-type=module", "-e", script(enter)], { encoding: "utf8" }).stderr;
    expect(run(false)).toContain(LOADED);
    expect(run(false)).not.toContain(HOOKS_ON);
    expect(run(true)).toContain(HOOKS_ON);
  });

  describe("in a sidecar serving every kind of call", () => {
    let sidecar: SidecarProcess;
    let c: Clients;
    beforeAll(async () => {
      sidecar = await startSidecarProcess("pglite", { NODE_OPTIONS: `--import ${PROBE}`, RECALL_LOG_LEVEL: "info" });
      c = connect(sidecar.address);
    });
    afterAll(async () => {
      c?.close();
      await sidecar?.stop();
    });

    it("are never turned on", async () => {
      const me = newIdentity();
      const belief = beliefMsg({ statement: "Andy prefers concise writing." });
      await unary(c.write, "PutBeliefs", { beliefs: [belief] }, me);
      await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: "s1" })] }, me);
      // Twice over, so the second round is served by the principal index once it has loaded.
      for (let round = 0; round < 2; round++) {
        await serverStream(c.memory, "Recall", { session_id: "s1", moment: "MOMENT_SNAPSHOT", query: { current_scope: "writing" } }, me);
        const events = await serverStream(c.memory, "Recall", { session_id: "s1", turn_id: `t${round}`, query: { text: "concise writing" } }, me);
        const traceId = (events.at(-1)!.result as Json).trace_id as string;
        await unary(c.memory, "Search", { text: "concise writing", session_id: "s1" }, me);
        await unary(c.memory, "RecallEpisodes", { session_id: "s1" }, me);
        await unary(c.memory, "GetTrace", { trace_id: traceId }, me);
        await unary(c.memory, "GetTrace", { turn_id: `t${round}` }, me);
        await unary(c.write, "RecordCitations", { trace_id: traceId, belief_ids: [belief.belief_id] }, me);
        await unary(c.health, "Check", { service: "" }, {});
        await new Promise((r) => setTimeout(r, 600));
      }
      // The second round ran on the principal index, not only on SQL.
      const metrics = await (await fetch(`http://${sidecar.address}/metrics`)).text();
      expect(Number(/^recall_index_hits_total (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
      expect(sidecar.logs()).toContain(LOADED);
      expect(sidecar.logs()).not.toContain(HOOKS_ON);
    });
  });
});

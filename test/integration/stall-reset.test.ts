import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";

/**
 * Issue 12, defect 1: with the database path stalled for several seconds and
 * then reset, postgres.js wrote a transaction's ROLLBACK to the closed
 * connection's null socket from a setImmediate, and the uncaught TypeError
 * ended the process. Writes and reads keep running through the stall.
 */
describe("a stalled PostgreSQL connection that is then reset", () => {
  let s: ProxiedSidecar | undefined;
  const me = newIdentity();

  beforeAll(async () => {
    s = await startProxiedSidecar({ RECALL_HEALTH_INTERVAL_MS: "200" });
  });
  afterAll(() => s?.stop());

  it("does not end the sidecar, which serves again afterwards", async () => {
    const { sidecar, proxy, c } = s!;
    let running = true;
    const load = async () => {
      while (running) {
        await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg(), beliefMsg()] }, me, 1000).catch(() => {});
        await unary(c.memory, "Search", { text: "concise" }, me, 1000).catch(() => {});
      }
    };
    const loops = [load(), load(), load(), load()];
    await new Promise((r) => setTimeout(r, 1000));
    proxy.stall();
    await new Promise((r) => setTimeout(r, 6000));
    await proxy.restore();
    await new Promise((r) => setTimeout(r, 2000));
    running = false;
    await Promise.all(loops);
    expect(sidecar.child.exitCode).toBeNull();
    expect(sidecar.logs()).not.toContain("TypeError");
    const ok = await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, me, 5000);
    expect(ok.written).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess } from "../support/sidecar-process.js";

/** The ephemeral store: `recall serve` on memory://, loaded from the template that npm run build ships. */
describe("ephemeral store", () => {
  const roundTrip = async (address: string) => {
    const c = connect(address);
    try {
      const me = newIdentity();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy keeps bees on the roof." })] }, me);
      const events = await serverStream(c.memory, "Recall", { query: { text: "bees on the roof" } }, me);
      return (events[events.length - 1]!.result as Json).items.length as number;
    } finally {
      c.close();
    }
  };

  it.each([
    ["RECALL_DATA_DIR=memory://", { RECALL_DATA_DIR: "memory://" }, []],
    ["serve --ephemeral, over a configured directory", {}, ["--ephemeral"]],
  ])("%s serves from the shipped template", async (_label, env, args) => {
    const sidecar = await startSidecarProcess("pglite", env, {}, args);
    try {
      expect(await roundTrip(sidecar.address)).toBe(1);
      const ready = sidecar.logs().split("\n").find((l) => l.includes('"store ready"'));
      expect(JSON.parse(ready!)).toMatchObject({ store: "pglite", applied: [], fromTemplate: true });
    } finally {
      expect(await sidecar.stop()).toBe(0);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExample } from "../../examples/typescript/recall-example.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** The TypeScript client example (connect-es generated client) against a real sidecar. The Python one runs in .ci/run. */
describe("examples/typescript", () => {
  let sidecar: SidecarProcess;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite");
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  it("writes a belief, opens a snapshot and recalls it in a turn", async () => {
    const rendered = await runExample(`http://${sidecar.address}`);
    expect(rendered).toMatch(/^<memory as_of="[^"]+" policy="retrieval@6">\n {2}\[m:8f21a0c3\] Andy's editor is Helix\. {2}\(user-stated, high\)\n<\/memory>\n$/);
  });
});

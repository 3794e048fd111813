import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 12, defect 9: no belief, query or episode text in any log line at any
 * level. Bad writes that reach the driver used to log its error at error
 * level with the statement's parameters (PGlite's `params`, PostgreSQL's
 * `detail` and `where`), belief text included.
 */
describe.each(["pglite", "postgres"] as const)("log lines carry no memory text (%s)", (kind) => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const SECRET = "Zanzibar-marmalade-7731";

  beforeAll(async () => {
    sidecar = await startSidecarProcess(kind, { RECALL_LOG_LEVEL: "trace" });
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    await sidecar?.stop();
  });

  it("after writes and reads the store rejects, at trace level", async () => {
    const attempts = [
      unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: `${SECRET} \u0000 belief` })] }, me),
      unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: `${SECRET}\u0000` })] }, me),
      unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ content: `${SECRET} \u0000 episode` })] }, me),
      unary(c.memory, "Search", { text: `${SECRET} \u0000 query` }, me),
      unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: `${SECRET} fine` })] }, me),
      unary(c.memory, "Search", { text: `${SECRET} query` }, me),
    ];
    await Promise.allSettled(attempts);
    // Every call's line has arrived (the process writes them asynchronously).
    const callLines = () => sidecar.logs().split("\n").filter((l) => /"msg":"call( failed)?"/.test(l) && l.includes("memory.v1")).length;
    for (let i = 0; i < 50 && callLines() < attempts.length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(callLines()).toBe(attempts.length);
    const logs = sidecar.logs();
    const leaking = logs.split("\n").filter((line) => line.includes(SECRET) || line.includes("marmalade"));
    expect(leaking).toEqual([]);
  });
});

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess, type SidecarStoreKind } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * A restart does not make every principal's first call slow: a sidecar
 * lists the principals whose indexes it holds in its data directory, and the
 * next sidecar on that directory loads them before anyone asks, most
 * recently used first. Real processes over real gRPC, on each kind of store
 * that outlives a restart.
 */

const metric = async (s: SidecarProcess, name: string): Promise<number> => {
  const text = await (await fetch(`http://${s.address}/metrics`)).text();
  const m = text.match(new RegExp(`^${name} (\\S+)$`, "m"));
  if (!m) throw new Error(`no metric ${name}:\n${text}`);
  return Number(m[1]);
};

const waitForMetric = async (s: SidecarProcess, name: string, atLeast: number): Promise<number> => {
  for (let i = 0; i < 200; i++) {
    const value = await metric(s, name);
    if (value >= atLeast) return value;
    await delay(50);
  }
  return metric(s, name);
};

/** A log line reaches this process through a pipe, a moment after the sidecar wrote it. */
const waitForLog = async (s: SidecarProcess, text: string): Promise<string> => {
  for (let i = 0; i < 100 && !s.logs().includes(text); i++) await delay(50);
  return s.logs();
};

const recallText = async (c: Clients, me: Json, text: string): Promise<string[]> => {
  const events = await serverStream(c.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text } }, me);
  return ((events[events.length - 1]!.result as Json).items as Json[]).map((i) => i.statement as string);
};

for (const kind of ["postgres", "pglite"] as SidecarStoreKind[]) {
  describe(`index warming after a restart (${kind})`, () => {
    let dataDir: string;
    let database: { url: string; drop(): Promise<void> } | undefined;
    let sidecar: SidecarProcess | undefined;
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "recall-warm-"));
      database = kind === "postgres" ? await freshPostgresDatabase() : undefined;
    });
    afterAll(async () => {
      await sidecar?.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });
    const start = () => startSidecarProcess(kind, {}, { dataDir, databaseUrl: database?.url });

    it("loads the indexes the last run held, most recent first, and serves their first calls from them", async () => {
      const older = newIdentity("older");
      const recent = newIdentity("recent");
      // The same principal id in another tenant: its own memory, never warmed, never mixed.
      const other = { tenant: `other-${recent.tenant}`, principal: recent.principal };

      sidecar = await start();
      let c = connect(sidecar.address);
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Oona keeps bees behind the boathouse." })] }, older);
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Ravi restores clocks from the 1890s." })] }, recent);
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Ravi in the other tenant paints lighthouses." })] }, other);
      expect(await recallText(c, older, "bees")).toEqual(["Oona keeps bees behind the boathouse."]);
      expect(await waitForMetric(sidecar, "recall_index_principals", 1)).toBe(1);
      expect(await recallText(c, recent, "clocks")).toEqual(["Ravi restores clocks from the 1890s."]);
      expect(await waitForMetric(sidecar, "recall_index_principals", 2)).toBe(2);
      c.close();
      expect(await sidecar.stop()).toBe(0);
      sidecar = undefined;

      const list = JSON.parse(await readFile(join(dataDir, "warm-principals.json"), "utf8")) as { principals: Json[] };
      expect(list.principals.map((p) => p.principalId)).toEqual([recent.principal, older.principal]);
      expect(list.principals.every((p) => (p.bytes as number) > 0)).toBe(true);

      // The next start loads both before any call; the first calls are answered from the index.
      sidecar = await start();
      expect(await waitForMetric(sidecar, "recall_index_principals", 2)).toBe(2);
      expect(await metric(sidecar, "recall_index_loads_total")).toBe(2);
      c = connect(sidecar.address);
      expect(await recallText(c, recent, "clocks")).toEqual(["Ravi restores clocks from the 1890s."]);
      expect(await recallText(c, older, "bees")).toEqual(["Oona keeps bees behind the boathouse."]);
      expect(await metric(sidecar, "recall_index_sql_fallbacks_total")).toBe(0);
      expect(await metric(sidecar, "recall_index_hits_total")).toBe(2);
      // Isolation: the other tenant's principal of the same id sees its own memory only, from SQL.
      expect(await recallText(c, other, "clocks lighthouses bees")).toEqual(["Ravi in the other tenant paints lighthouses."]);
      expect(await metric(sidecar, "recall_index_sql_fallbacks_total")).toBe(1);
      c.close();
      expect(await waitForLog(sidecar, "principal indexes warmed from the last run")).toContain("principal indexes warmed from the last run");
    });

    it("starts as usual when the list is not one it wrote", async () => {
      await sidecar?.stop();
      sidecar = undefined;
      const { writeFile } = await import("node:fs/promises");
      await writeFile(join(dataDir, "warm-principals.json"), "{not json");
      sidecar = await start();
      const c = connect(sidecar.address);
      const me = newIdentity();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Zed sails a dinghy on Sundays." })] }, me);
      expect(await recallText(c, me, "dinghy")).toEqual(["Zed sails a dinghy on Sundays."]);
      c.close();
      expect(await metric(sidecar, "recall_index_principals")).toBe(0);
      expect(await waitForLog(sidecar, "index warm list unreadable")).toContain("index warm list unreadable");
    });
  });
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { openStore } from "../../src/store/open-store.js";
import { isUnavailable } from "../../src/domain/errors.js";
import { PGLITE_WORKER_YOUNG_GENERATION_MB, startPgliteWorker, takePgliteWorker, type StartedWorker } from "../../src/store/ephemeral-start.js";
import { pgliteWorkerClient } from "../../src/store/pglite/pglite-worker-client.js";
import type { WorkerMemory } from "../../src/store/pglite/pglite-worker.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { StoreTimeoutError } from "../../src/store/store-deadline.js";

/** The ephemeral store's client, whose PGlite runs in a worker thread (the built dist/store/pglite-worker.js). */
describe("PGlite in a worker thread", () => {
  let db: SqlClient;
  let fromTemplate: boolean;
  let started: StartedWorker;
  let memory: () => Promise<WorkerMemory>;
  beforeAll(async () => {
    const taken = takePgliteWorker(false);
    if (!taken) throw new Error("no dist/store/pglite-worker.js: run npm run build");
    started = taken;
    ({ client: db, fromTemplate, memory } = await pgliteWorkerClient(started));
    await db.exec("CREATE TABLE w (id int PRIMARY KEY, at timestamptz, tags text[], doc jsonb)");
  });
  afterAll(async () => db?.close());

  it("is loaded from the template and answers with the types PGlite parses", async () => {
    expect(fromTemplate).toBe(true);
    const at = new Date("2026-01-02T03:04:05.000Z");
    await db.query("INSERT INTO w VALUES ($1, $2, $3, $4)", [1, at, ["a", "b"], { k: 1 }]);
    expect(await db.query("SELECT * FROM w WHERE id = 1")).toEqual([{ id: 1, at, tags: ["a", "b"], doc: { k: 1 } }]);
  });

  it("commits a transaction's work, rolls it back when the work throws, and runs a nested one inside it", async () => {
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO w (id) VALUES (2)");
      await tx.transaction((inner) => inner.query("INSERT INTO w (id) VALUES (3)"));
    });
    const failed = await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO w (id) VALUES (4)");
        throw new Error("no");
      })
      .catch((e: Error) => e.message);
    expect(failed).toBe("no");
    expect((await db.query<{ id: number }>("SELECT id FROM w WHERE id BETWEEN 2 AND 4 ORDER BY id")).map((r) => r.id)).toEqual([2, 3]);
  });

  it("passes a database error's SQLSTATE and message across", async () => {
    const error = (await db.query("INSERT INTO w (id) VALUES (1)").catch((e: unknown) => e)) as Error & { code?: string };
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("23505");
    expect(error.message).toMatch(/duplicate key/);
  });

  it("delivers notifications to a listener until it unlistens", async () => {
    const payloads: string[] = [];
    let connected = 0;
    const unlisten = await db.listen("w_chan", (p) => payloads.push(p), () => (connected += 1));
    await db.query("SELECT pg_notify('w_chan', 'one')");
    await expect.poll(() => payloads).toEqual(["one"]);
    await unlisten();
    await db.query("SELECT pg_notify('w_chan', 'two')");
    await db.query("SELECT 1");
    expect([payloads, connected]).toEqual([["one"], 1]);
  });

  it("is sized for a sidecar: 2 MB of shared buffers, a capped young generation, and the start's buffers collected", async () => {
    // Issue 37: an idle ephemeral sidecar held 236 MiB. Its files are in memory already, so shared
    // buffers are a second copy of pages; V8 grew the thread's young generation to 16 MB at start and
    // kept it; and what the start read (PostgreSQL's WebAssembly, the template PGlite unpacks) stayed
    // resident until a collection the idle thread never needed.
    expect(await db.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "2MB" }]);
    expect(started.worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(PGLITE_WORKER_YOUNG_GENERATION_MB);
    // Left: the database's files (10 MiB) and PGlite's own file-system bundle (6 MiB); 39 MiB before
    // the collection, which runs a second after the database answers.
    await expect.poll(async () => (await memory()).arrayBuffers / 2 ** 20, { timeout: 5_000 }).toBeLessThan(24);
  });

  it("sends no statement once the store deadline has passed", async () => {
    const error = await db.query("SELECT 1", [], { deadline: Date.now() - 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTimeoutError);
  });

  it("after close, fails every call as a closed PGlite does (UNAVAILABLE)", async () => {
    const started = takePgliteWorker(false)!;
    const { client } = await pgliteWorkerClient(started);
    await client.close();
    await client.close();
    const error = await client.query("SELECT 1").catch((e: unknown) => e);
    expect(isUnavailable(error)).toBe(true);
  });
});

/** A data directory's store (RECALL_DATA_DIR) runs in the same worker, so its statements leave the main thread free. */
describe("a data directory's PGlite in a worker thread", () => {
  it("opens the directory through openStore, keeps what it wrote across a reopen, and leaves the event loop free while a statement runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recall-worker-dir-"));
    const logger = createLogger("silent");
    try {
      const first = await openStore({ kind: "pglite", dataDir: dir }, logger);
      await first.db.exec("CREATE TABLE kept (id int PRIMARY KEY)");
      await first.db.query("INSERT INTO kept VALUES (7)");
      // In process, PGlite runs a statement synchronously: no timer fires until it is done.
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 5);
      await first.db.query("SELECT count(*) FROM generate_series(1, 4000000) g WHERE g % 7 = 3");
      clearInterval(timer);
      expect(ticks).toBeGreaterThan(3);
      await first.db.close();
      const second = await openStore({ kind: "pglite", dataDir: dir }, logger);
      try {
        expect(await second.db.query("SELECT id FROM kept")).toEqual([{ id: 7 }]);
      } finally {
        await second.db.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is sized for a sidecar: a new directory is written from the template, not by initdb, with 16 MB of shared buffers and shared memory for one backend", async () => {
    // Issue 37: initdb's WebAssembly PostgreSQL stayed in the process's memory, and 128 MB of shared
    // buffers with it; a sidecar on a fresh directory held 485–546 MiB idle.
    const dir = join(await mkdtemp(join(tmpdir(), "recall-worker-dir-")), "data");
    try {
      const fresh = await pgliteWorkerClient(startPgliteWorker(false, dir));
      try {
        expect(fresh.fromTemplate).toBe(true);
        expect(await fresh.client.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
        // The template's schema is there: the store's tables, without a migration step.
        expect(await fresh.client.query("SELECT count(*)::int AS n FROM beliefs")).toEqual([{ n: 0 }]);
        await fresh.client.query("CREATE TABLE kept (id int PRIMARY KEY)");
        await fresh.client.query("INSERT INTO kept VALUES (7)");
      } finally {
        await fresh.client.close();
      }
      const reopened = await pgliteWorkerClient(startPgliteWorker(false, dir));
      try {
        expect(reopened.fromTemplate).toBe(false);
        expect(await reopened.client.query("SELECT id FROM kept")).toEqual([{ id: 7 }]);
        expect(await reopened.client.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
        // Shared memory for one backend, and PGlite's bundle without what such a store never reads (docs/adr/0026).
        expect(await reopened.client.query("SELECT current_setting('max_connections') AS c, current_setting('huge_pages') AS h")).toEqual([{ c: "4", h: "off" }]);
        await expect(reopened.client.query("SELECT convert_to('x', 'SJIS')")).rejects.toThrow(/utf8_and_sjis/);
        expect(await reopened.client.query("SELECT to_tsvector('english', 'running')::text AS v")).toEqual([{ v: "'run':1" }]);
      } finally {
        await reopened.client.close();
      }
    } finally {
      await rm(join(dir, ".."), { recursive: true, force: true });
    }
  });
});

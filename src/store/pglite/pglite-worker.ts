import { setFlagsFromString } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readEphemeralFiles, sendableError, type EphemeralFiles } from "../ephemeral-start.js";
import { collectGarbage } from "./collect-garbage.js";

/**
 * V8 compiles WebAssembly lazily with its baseline compiler and recompiles a
 * function with its optimising one once it has run a while (dynamic tiering,
 * on background threads). A start runs so much of PostgreSQL once that the
 * default budget optimises hundreds of functions: about 0.3 s of CPU beside
 * the two threads that start the sidecar, on a machine of two cores. With a
 * budget 100 times larger only what runs often is optimised. V8's flags are
 * the process's, and this process runs no other WebAssembly.
 */
setFlagsFromString("--wasm-tiering-budget=180000000");
const { vector, dataDir } = workerData as PgliteWorkerData;
// PGlite's compiled WebAssembly and the template (an ephemeral store's database, a new data
// directory's first contents), under way while PGlite's JavaScript is imported. Dropped once the
// database answers, and what the start left is collected (collect-garbage.ts); an ephemeral
// store's files are the template's bytes (template-fs.ts), kept by its file system.
const fresh = dataDir === undefined || !existsSync(join(dataDir, "PG_VERSION"));
let files: EphemeralFiles | null = readEphemeralFiles(fresh);
const { openDataDirPglite, openEphemeralPglite } = await import("./pglite-template.js");

/**
 * The embedded store's PGlite (the ephemeral one, or a data directory's), in
 * a worker thread of its own: the ephemeral one starts while the main thread
 * loads the sidecar, and either one's statements then run beside the main
 * thread's work instead of inside it (a recall's trace insert costs PGlite
 * 2-6 ms of CPU, which in process held the next recall behind it). The main thread talks to it
 * through store/pglite/pglite-worker-client.ts, one message a request:
 *   { id, op: "query", text, params, tx? } → rows      { id, op: "exec", script, tx? }
 *   { id, op: "begin" } → tx id                          { id, op: "end", tx, commit }
 *   { id, op: "listen", channel, sub }                   { id, op: "unlisten", sub }
 *   { id, op: "memory" } → this thread's WorkerMemory    { id, op: "close" }
 * answered by { type: "reply", id, value } or { type: "reply", id, error }; a
 * notification is { type: "notify", sub, payload }.
 */

/** What the worker opens: a data directory, or (without one) the ephemeral store. */
export interface PgliteWorkerData {
  vector: boolean;
  dataDir?: string;
}

export type WorkerRequest = { id: number } & (
  | { op: "query"; text: string; params: readonly unknown[]; tx?: number }
  | { op: "exec"; script: string; tx?: number }
  | { op: "begin" }
  | { op: "end"; tx: number; commit: boolean }
  | { op: "listen"; channel: string; sub: number }
  | { op: "unlisten"; sub: number }
  | { op: "memory" }
  | { op: "close" }
);

/** What the worker's own heap holds, in bytes (process.memoryUsage's fields that are the thread's, not the process's). */
export interface WorkerMemory {
  heapUsed: number;
  heapTotal: number;
  /** ArrayBuffers (PGlite's in-memory files among them; not its WebAssembly memory). */
  arrayBuffers: number;
}

const port = parentPort!;
const ROLLBACK = Symbol("rollback");

interface OpenTransaction {
  tx: Transaction;
  decide(commit: boolean): void;
  done: Promise<unknown>;
}

async function serve(db: PGlite): Promise<void> {
  const transactions = new Map<number, OpenTransaction>();
  const unsubscribes = new Map<number, () => Promise<void>>();
  let transactionIds = 0;

  const target = (tx: number | undefined) => {
    if (tx === undefined) return db;
    const open = transactions.get(tx);
    if (!open) throw new Error("the transaction is over");
    return open.tx;
  };

  /** Opens a transaction (once PGlite's transaction lock is ours) that stays open until "end". */
  const begin = () =>
    new Promise<number>((resolve, reject) => {
      const id = (transactionIds += 1);
      let decide!: (commit: boolean) => void;
      const decided = new Promise<boolean>((r) => (decide = r));
      const done = db.transaction(async (tx) => {
        transactions.set(id, { tx, decide, done });
        resolve(id);
        if (!(await decided)) throw ROLLBACK;
      });
      // A BEGIN that fails before the callback runs; later failures are the "end" request's.
      done.catch(reject);
    });

  const end = async (id: number, commit: boolean) => {
    const open = transactions.get(id);
    if (!open) throw new Error("the transaction is over");
    transactions.delete(id);
    open.decide(commit);
    await open.done.catch((error: unknown) => {
      if (error !== ROLLBACK) throw error;
    });
  };

  const handle = async (r: WorkerRequest): Promise<unknown> => {
    switch (r.op) {
      case "query":
        return (await target(r.tx).query(r.text, r.params as unknown[])).rows;
      case "exec":
        await target(r.tx).exec(r.script);
        return undefined;
      case "begin":
        return begin();
      case "end":
        return end(r.tx, r.commit);
      case "listen":
        unsubscribes.set(r.sub, await db.listen(r.channel, (payload) => port.postMessage({ type: "notify", sub: r.sub, payload })));
        return undefined;
      case "unlisten":
        await unsubscribes.get(r.sub)?.();
        unsubscribes.delete(r.sub);
        return undefined;
      case "memory": {
        const { heapUsed, heapTotal, arrayBuffers } = process.memoryUsage();
        return { heapUsed, heapTotal, arrayBuffers } satisfies WorkerMemory;
      }
      case "close":
        await db.close();
        return undefined;
    }
  };

  port.on("message", (r: WorkerRequest) => {
    handle(r).then(
      (value) => port.postMessage({ type: "reply", id: r.id, value }),
      (error: unknown) => port.postMessage({ type: "reply", id: r.id, error: sendableError(error) }),
    );
  });
}

try {
  const { db, fromTemplate, migrations } =
    dataDir === undefined ? await openEphemeralPglite({ vector, files: files! }) : await openDataDirPglite(dataDir, { vector, files: files! });
  files = null;
  await serve(db);
  port.postMessage({ type: "ready", fromTemplate, migrations });
  // A second later: run at once, the full collection held up the main thread's first statements
  // (the migration check, the server's start) by about 100 ms of an ephemeral start.
  setTimeout(collectGarbage, 1_000);
} catch (error) {
  port.postMessage({ type: "failed", error: sendableError(error) });
}

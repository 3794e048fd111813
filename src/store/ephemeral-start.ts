import { existsSync, openAsBlob } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { PGliteOptions } from "@electric-sql/pglite";
import type { PgliteWorkerData } from "./pglite/pglite-worker.js";
import { readBundleWithHoles, readRange, type BundleLayout } from "./pglite/pglite-bundle.js";

/**
 * The start of the ephemeral store, whose PGlite runs in a worker thread
 * (store/pglite/pglite-worker.ts). This module imports nothing but Node's (and
 * pglite-bundle.ts, which imports only Node's), so that
 * a process entry point can start the store before it imports the sidecar:
 * PGlite then starts on the second core while the first loads and evaluates
 * the sidecar's modules (docs/adr/0007).
 */

/** RECALL_DATA_DIR value (and `recall serve --ephemeral`) for the in-memory store. */
export const EPHEMERAL_DATA_DIR = "memory://";

/** Built output, found from src/store and dist/store alike (and from dist/chunks, where a bundle puts this code). */
export const PGLITE_WORKER_PATH = fileURLToPath(new URL("../../dist/store/pglite-worker.js", import.meta.url));
/** The migrated template `npm run build` writes (store/pglite/pglite-template.ts), at the package root's dist/. */
export const PGLITE_TEMPLATE_PATH = fileURLToPath(new URL("../../dist/pglite-template.tar", import.meta.url));
/** Beside it: the migrations the template holds, so a start can tell it needs none (JSON list of "0001_initial", …). */
export const PGLITE_TEMPLATE_MANIFEST = fileURLToPath(new URL("../../dist/pglite-template.json", import.meta.url));
/** And where the files a database loaded from it never reads lie in PGlite's bundle (store/pglite/pglite-bundle.ts). */
export const PGLITE_BUNDLE_LAYOUT = fileURLToPath(new URL("../../dist/pglite-bundle.json", import.meta.url));

/** One of PGlite's own files (its WebAssembly, its file-system bundle), beside its modules. */
export function pgliteFile(name: "pglite.wasm" | "pglite.data"): URL {
  return new URL(name, import.meta.resolve("@electric-sql/pglite"));
}

/** PGlite's WebAssembly, compiled, and its file-system bundle: PGlite's own, handed to PGlite.create so that it does not load them itself. */
export interface PgliteEngine {
  pgliteWasmModule: WasmModule;
  fsBundle: Blob;
}

/** WebAssembly's types are not in this project's libs (no DOM); the calls used, typed. */
type WasmModule = NonNullable<PGliteOptions["pgliteWasmModule"]>;
const { WebAssembly } = globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule>; Memory: new (pages: { initial: number }) => { buffer: ArrayBuffer } };
};

/**
 * A file's bytes in memory V8 maps itself (a WebAssembly memory, 64 KiB
 * pages) instead of glibc's malloc. When glibc frees a large block it had
 * mapped, it raises its mmap threshold to that block's size and keeps up to
 * twice that of freed memory for later: PostgreSQL's WebAssembly (9 MB) and
 * the template (10 MB), read the usual way and freed once used, made the
 * worker's start leave about 15 MiB in the process for good. This memory
 * goes back to the system when it is collected.
 */
export async function readOutsideMalloc(path: string | URL): Promise<Uint8Array> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const bytes = new Uint8Array(new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(size / 65_536)) }).buffer, 0, size);
    await readRange(file, bytes, 0, size, path);
    return bytes;
  } finally {
    await file.close();
  }
}

/**
 * The template as PGlite reads it: a Blob of its file whose bytes, when
 * PGlite asks for them, are read outside malloc (readOutsideMalloc; the
 * buffer runs on to a whole page, and a tar's end is zeros anyway). The
 * ephemeral store's files are these bytes (pglite/template-fs.ts); a new data
 * directory's are written to disk, and the buffer is collected.
 */
async function templateBlob(path: string): Promise<Blob> {
  const blob = await openAsBlob(path);
  return Object.assign(blob, { arrayBuffer: async () => (await readOutsideMalloc(path)).buffer });
}

/**
 * What an ephemeral start reads; each read is under way once this exists. The
 * template and PGlite's file-system bundle are Blobs of their files, read
 * when PGlite reads them: PGlite keeps the options it was created with for
 * the life of its database (its WebAssembly module's closures hold them), and
 * Blobs of bytes read ahead held 16 MiB of the worker's memory for good.
 */
export interface EphemeralFiles {
  /** null: no template (a checkout that was never built). */
  template: Promise<Blob | null>;
  manifest: Promise<string[] | null>;
  /** undefined: PGlite's files are not where this version keeps them; PGlite then loads its own. */
  engine: Promise<PgliteEngine | undefined>;
  /**
   * The bundle's files left unread (store/pglite/pglite-bundle.ts), for the
   * opener to remove once the database answers; null when it was read whole
   * (initdb will run, or the build wrote no layout for this bundle).
   */
  unread: Promise<BundleLayout | null>;
}

/**
 * Starts reading the template (unless `withTemplate` is false: a data
 * directory that exists) and PGlite's files, and compiling PGlite's
 * WebAssembly (on V8's background threads), before PGlite's JavaScript is
 * imported: the reads and the compile then overlap that import.
 */
export function readEphemeralFiles(withTemplate = true): EphemeralFiles {
  const template = withTemplate ? templateBlob(PGLITE_TEMPLATE_PATH).catch(() => null) : Promise.resolve(null);
  // Without a template (a checkout never built) a new database is made by initdb, which reads the whole bundle.
  const initdbRuns = template.then((t) => withTemplate && t === null);
  const bundle = (async () => {
    const url = pgliteFile("pglite.data");
    const layout = (await initdbRuns) ? null : await readFile(PGLITE_BUNDLE_LAYOUT, "utf8").then((text) => JSON.parse(text) as BundleLayout, () => null);
    const buffer = layout ? await readBundleWithHoles(url, layout) : null;
    const blob = await openAsBlob(url);
    if (!buffer) return { fsBundle: blob, unread: null };
    return { fsBundle: Object.assign(blob, { arrayBuffer: async () => buffer }), unread: layout };
  })();
  const engine = (async () => {
    const compiled = readOutsideMalloc(pgliteFile("pglite.wasm")).then((wasm) => WebAssembly.compile(wasm));
    const [pgliteWasmModule, { fsBundle }] = await Promise.all([compiled, bundle]);
    return { pgliteWasmModule, fsBundle };
  })().catch(() => undefined);
  return {
    template,
    manifest: withTemplate ? readFile(PGLITE_TEMPLATE_MANIFEST, "utf8").then((text) => JSON.parse(text) as string[], () => null) : Promise.resolve(null),
    engine,
    // Unread files only where PGlite takes this bundle (an engine of its own otherwise).
    unread: engine.then((e) => (e ? bundle.then((b) => b.unread) : null)),
  };
}

/** What the worker reports once its database answers. */
export interface WorkerReady {
  fromTemplate: boolean;
  /** The migrations the template holds (null without a template). */
  migrations: string[] | null;
}

export interface StartedWorker {
  readonly worker: Worker;
  readonly vector: boolean;
  /** Settles when the worker's database answers, or with the reason it cannot. */
  readonly ready: Promise<WorkerReady>;
}

/** An error as it crosses threads: its kind, message, stack and the string or number fields (SQLSTATE code and the like). */
export type SentError = { name: string; message: string; stack?: string } & Record<string, unknown>;

export function sendableError(error: unknown): SentError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const sent: SentError = { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  for (const [key, value] of Object.entries(error)) {
    // `query` and `params` (PGlite decorates its errors with them) hold data and are left behind.
    if (key !== "query" && key !== "params" && (typeof value === "string" || typeof value === "number")) sent[key] = value;
  }
  return sent;
}

export function receivedError(sent: SentError): Error {
  const { name, message, stack, ...fields } = sent;
  const error = Object.assign(new Error(message), fields);
  error.name = name;
  if (stack !== undefined) error.stack = stack;
  return error;
}

/**
 * The worker's young generation (where V8 allocates every new object), in
 * MB. Left to V8, a PGlite start grows it to 16 and it stays that size: 15
 * MiB of an idle sidecar. With 8 it holds about 5 MiB; a large principal's
 * index load, whose rows pass through this thread, then takes a few per cent
 * longer (docs/adr/0025).
 */
export const PGLITE_WORKER_YOUNG_GENERATION_MB = 8;

/** A new worker (of a data directory, or else of the ephemeral store), not keeping the process alive by itself (the client refs it while it waits for an answer). */
export function startPgliteWorker(vector: boolean, dataDir?: string): StartedWorker {
  const workerData: PgliteWorkerData = dataDir === undefined ? { vector } : { vector, dataDir };
  const worker = new Worker(PGLITE_WORKER_PATH, { workerData, resourceLimits: { maxYoungGenerationSizeMb: PGLITE_WORKER_YOUNG_GENERATION_MB } });
  worker.unref();
  const ready = new Promise<WorkerReady>((resolve, reject) => {
    const settle = (fn: () => void) => {
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      fn();
    };
    const onMessage = (m: { type: string; error?: SentError } & WorkerReady) => {
      if (m.type === "ready") settle(() => resolve({ fromTemplate: m.fromTemplate, migrations: m.migrations }));
      if (m.type === "failed") settle(() => reject(receivedError(m.error!)));
    };
    const onError = (error: Error) => settle(() => reject(error));
    const onExit = (code: number) => settle(() => reject(new Error(`the PGlite worker exited with code ${code} before its database answered`)));
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
  });
  ready.catch(() => {}); // its taker handles it; one never taken must not be an unhandled rejection
  return { worker, vector, ready };
}

let prestarted: StartedWorker | undefined;

/**
 * For `recall serve` and the test sidecar's child, before they import the
 * rest: starts the worker when the environment and arguments ask for the
 * ephemeral store (as config/config.ts and `--ephemeral` read them). A guess that
 * turns out wrong costs a worker that is stopped unused; openStore decides.
 */
export function prestartEphemeralStore(env: NodeJS.ProcessEnv, args: readonly string[]): void {
  const ephemeral = args.includes("--ephemeral") || (!env.RECALL_DATABASE_URL && env.RECALL_DATA_DIR === EPHEMERAL_DATA_DIR);
  if (ephemeral && existsSync(PGLITE_WORKER_PATH)) prestarted = startPgliteWorker(env.RECALL_SEMANTIC === "on");
}

/** The prestarted worker when it has the extensions asked for (once), else a new one; undefined when the worker was never built. */
export function takePgliteWorker(vector: boolean): StartedWorker | undefined {
  const early = prestarted;
  prestarted = undefined;
  if (early?.vector === vector) return early;
  if (early) void early.worker.terminate();
  return existsSync(PGLITE_WORKER_PATH) ? startPgliteWorker(vector) : undefined;
}

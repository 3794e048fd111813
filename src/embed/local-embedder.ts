import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { EmbedderError, type EmbedPurpose, type Embedder } from "../ports/embedder.js";
import type { LocalWorkerData, LocalWorkerMessage } from "./local-embedder-worker.js";
import type { LocalModelFolder } from "./local-model-folder.js";

/**
 * RECALL_EMBEDDER=local: a sentence-transformers model run in process, in a
 * worker thread of its own, so a sidecar needs no model server and its event
 * loop never waits on inference.
 *
 * The worker runs one sub-batch at a time. A request is cut into sub-batches
 * of at most `subBatch` texts, similar lengths together (little padding); a
 * request of one text, a recall's query, goes ahead of every waiting
 * sub-batch, so a query waits for at most the one sub-batch running, never for
 * a backfill's whole batch. An aborted request (the recall's deadline) is
 * answered at once with the signal's reason; its sub-batches not yet sent are
 * dropped. A worker that dies fails what it held and is started again on the
 * next request.
 */
export const LOCAL_WORKER_PATH = fileURLToPath(new URL("../../dist/embed/local-embedder-worker.js", import.meta.url));

/** Texts per forward pass: larger passes gain little on a CPU and make a query wait longer behind one. */
const DEFAULT_SUB_BATCH = 16;

export interface LocalEmbedderOptions {
  /** ONNX Runtime's intra-op threads in the worker. */
  threads: number;
  subBatch?: number;
  /** The worker's entry (tests: the built file). */
  workerPath?: string;
}

interface Job {
  texts: string[];
  /** Where each text's vector goes in the request's answer. */
  slots: number[];
  request: Request;
}

interface Request {
  vectors: (number[] | undefined)[];
  pending: number;
  resolve(v: number[][]): void;
  reject(e: unknown): void;
  done: boolean;
}

export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly queue: Job[] = [];
  private running: { id: number; job: Job } | null = null;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly folder: LocalModelFolder,
    private readonly options: LocalEmbedderOptions,
  ) {
    // The folder's name names the model; another pooling or prefix of the same weights is another id.
    const variant = folder.pooling === "mean" && folder.prefixes.query === "" && folder.prefixes.document === "" ? "" : `:${folder.pooling}`;
    this.id = `local:${folder.name}:${folder.dimensions}${variant}`;
    this.dimensions = folder.dimensions;
  }

  /** Starts the worker and loads the model now, so the first recall does not wait for it. */
  start(): Promise<void> {
    return (this.ready ??= this.spawn());
  }

  embed(input: readonly string[], signal?: AbortSignal, purpose: EmbedPurpose = "document"): Promise<number[][]> {
    const prefix = this.folder.prefixes[purpose];
    const texts = prefix === "" ? input : input.map((t) => prefix + t);
    if (this.closed) return Promise.reject(new EmbedderError("local embedder closed"));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<number[][]>((resolve, reject) => {
      const request: Request = { vectors: new Array(texts.length), pending: texts.length, resolve, reject, done: false };
      const jobs = subBatches(texts, this.options.subBatch ?? DEFAULT_SUB_BATCH).map((slots) => ({ texts: slots.map((i) => texts[i]!), slots, request }));
      if (texts.length === 1) this.queue.unshift(...jobs);
      else this.queue.push(...jobs);
      signal?.addEventListener("abort", () => this.settle(request, signal.reason), { once: true });
      this.start().then(
        () => this.pump(),
        (error: unknown) => this.settle(request, error),
      );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job.request, new EmbedderError("local embedder closed"));
    if (this.running) this.settle(this.running.job.request, new EmbedderError("local embedder closed"));
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private spawn(): Promise<void> {
    const data: LocalWorkerData = { folder: this.folder, threads: this.options.threads };
    const worker = new Worker(this.options.workerPath ?? LOCAL_WORKER_PATH, { workerData: data });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let loaded = false;
      worker.on("message", (m: LocalWorkerMessage) => {
        if (m.type === "ready") {
          loaded = true;
          worker.unref();
          resolve();
        } else if (m.type === "failed") reject(new EmbedderError(`local model ${this.folder.dir} could not be loaded: ${m.message}`));
        else this.answer(m);
      });
      const died = (error: Error) => {
        if (this.worker !== worker) return;
        this.worker = null;
        this.ready = null;
        const failure = new EmbedderError(`local embedder's worker stopped: ${error.message}`);
        if (!loaded) reject(failure);
        if (this.running) this.settle(this.running.job.request, failure);
        this.running = null;
        // Whatever waits is retried on a new worker.
        if (this.queue.length > 0 && !this.closed) this.start().then(() => this.pump(), (e: unknown) => this.failQueue(e));
      };
      worker.on("error", died);
      worker.on("exit", (code) => died(new Error(`exit code ${code}`)));
    });
  }

  /** Sends the next live sub-batch when the worker is idle. */
  private pump(): void {
    if (this.running || !this.worker) return;
    let job = this.queue.shift();
    while (job && job.request.done) job = this.queue.shift();
    if (!job) {
      this.worker.unref();
      return;
    }
    // Referenced while it works: a process waiting only on an embedding must not exit under it.
    this.worker.ref();
    const id = this.nextId++;
    this.running = { id, job };
    this.worker.postMessage({ id, texts: job.texts });
  }

  private answer(m: Extract<LocalWorkerMessage, { id: number }>): void {
    const running = this.running;
    if (!running || running.id !== m.id) return;
    this.running = null;
    const { request, slots } = running.job;
    if (m.type === "error") this.settle(request, new EmbedderError(`local embedder failed: ${m.message}`));
    else if (!request.done) {
      slots.forEach((slot, i) => {
        request.vectors[slot] = Array.from(m.vectors.subarray(i * this.dimensions, (i + 1) * this.dimensions));
      });
      request.pending -= slots.length;
      if (request.pending === 0) this.settle(request);
    }
    this.pump();
  }

  private failQueue(error: unknown): void {
    for (const job of this.queue.splice(0)) this.settle(job.request, error);
  }

  /** Answers a request once: with its vectors, or with `error`; its waiting sub-batches are then skipped. */
  private settle(request: Request, error?: unknown): void {
    if (request.done) return;
    request.done = true;
    if (error !== undefined) request.reject(error);
    else request.resolve(request.vectors as number[][]);
  }
}

/** Indexes of `texts` in sub-batches of at most `size`, shortest texts together. */
export function subBatches(texts: readonly string[], size: number): number[][] {
  const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length || a - b);
  const out: number[][] = [];
  for (let i = 0; i < order.length; i += size) out.push(order.slice(i, i + size));
  return out;
}

import { setTimeout as delay } from "node:timers/promises";
import type { SensitivityLevel } from "../domain/model.js";
import type { Logger } from "../logger.js";
import type { MissingEmbedding, SemanticStore } from "../store/semantic-store.js";
import { EmbedderError, type Embedder } from "./embedder.js";

/**
 * The background embedder: fills in the embeddings of beliefs that have
 * none (or a stale one), in batches, off the write path. Writes never wait
 * for it and never fail because of it; what is missing is read from the
 * store each pass, so nothing is lost to an outage or a restart. Woken after
 * each local write, and polls for writes of other sidecars. While the
 * embedder fails it backs off exponentially, and a write does not wake it.
 */

export interface BackfillOptions {
  batch: number;
  pollIntervalMs: number;
  /** First retry delay after a failure; doubles per consecutive failure up to retryMaxMs. */
  retryMinMs: number;
  retryMaxMs: number;
  /** Beliefs above this sensitivity are never sent to the embedder. */
  sensitivityCeiling: SensitivityLevel;
}

export class EmbeddingBackfill {
  private stopped = false;
  private readonly abort = new AbortController();
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | undefined;
  private failures = 0;
  private woken = false;
  /** Beliefs whose statement the endpoint refused on its own; skipped until restart so they cannot stall the rest. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly store: SemanticStore,
    private readonly embedder: Embedder,
    private readonly options: BackfillOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** A local write happened: look for new beliefs now, unless backing off. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops after aborting the request in flight; what it had not saved is embedded by the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error("background embedder stopped"));
    this.wakeUp?.();
    await this.loop;
  }

  /** Embeds and saves one batch; returns how many beliefs it handled. Throws when the embedder or store fails. */
  async embedBatch(signal?: AbortSignal): Promise<number> {
    const missing = await this.store.missingEmbeddings(this.embedder.id, this.options.sensitivityCeiling, this.options.batch, [
      ...this.refused,
    ]);
    if (missing.length === 0) return 0;
    let vectors: (number[] | null)[];
    try {
      vectors = await this.embedder.embed(
        missing.map((m) => m.statement),
        signal,
      );
    } catch (error) {
      if (!(error instanceof EmbedderError && error.rejectedInput)) throw error;
      // One statement the endpoint refuses (too long for the model, say) must not hold back the rest.
      vectors = [];
      for (const m of missing) vectors.push(await this.embedAlone(m, signal));
    }
    await this.store.saveEmbeddings(
      this.embedder.id,
      missing.flatMap((m, i) => (vectors[i] ? [{ ...m, vector: vectors[i] }] : [])),
    );
    return missing.length;
  }

  private async embedAlone(m: MissingEmbedding, signal: AbortSignal | undefined): Promise<number[] | null> {
    try {
      const [vector] = await this.embedder.embed([m.statement], signal);
      return vector!;
    } catch (error) {
      if (!(error instanceof EmbedderError && error.rejectedInput)) throw error;
      this.refused.add(m.beliefId);
      // Ids only: statements are never logged.
      this.logger.warn(
        { tenant: m.principal.tenantId, principal: m.principal.principalId, beliefId: m.beliefId, status: error.status },
        "embeddings endpoint refused a statement; the semantic arm will not find this belief until restart",
      );
      return null;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let waitMs: number;
      let wakeable = true;
      try {
        const n = await this.embedBatch(this.abort.signal);
        if (this.failures > 0) this.logger.info({ failures: this.failures }, "background embedder recovered");
        this.failures = 0;
        // A full batch means more are waiting.
        waitMs = n >= this.options.batch ? 0 : this.options.pollIntervalMs;
      } catch (err) {
        if (this.stopped) break;
        this.failures++;
        waitMs = Math.min(this.options.retryMaxMs, this.options.retryMinMs * 2 ** (this.failures - 1));
        wakeable = false;
        // The first failure of a streak is a warning; the rest would repeat it every retry.
        if (this.failures === 1) this.logger.warn({ err, retryMs: waitMs }, "background embedder failed; retrying with backoff");
        else this.logger.debug({ err, failures: this.failures, retryMs: waitMs }, "background embedder still failing");
      }
      if (waitMs > 0) await this.sleep(waitMs, wakeable);
    }
  }

  private async sleep(ms: number, wakeable: boolean): Promise<void> {
    if (wakeable && this.woken) return;
    const wait = new AbortController();
    this.wakeUp = () => {
      if (this.stopped || wakeable) wait.abort();
    };
    try {
      await delay(ms, undefined, { signal: wait.signal, ref: false });
    } catch {
      // Woken or stopped.
    } finally {
      this.wakeUp = null;
    }
  }
}

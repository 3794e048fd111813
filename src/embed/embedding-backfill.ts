import { setTimeout as delay } from "node:timers/promises";
import type { Principal, SensitivityLevel } from "../domain/model.js";
import type { Logger } from "../log/logger.js";
import type { MissingEmbedding, SemanticStore } from "../store/candidates/semantic-store.js";
import { EmbedderError, type Embedder } from "../ports/embedder.js";
import { documentParts, documentVector } from "./document-vector.js";

/**
 * The background embedder: fills in the embeddings of beliefs that have
 * none (or a stale one), in batches, off the write path. Writes never wait
 * for it and never fail because of it; what is missing is read from the
 * store each pass, so nothing is lost to an outage or a restart.
 *
 * A write through this sidecar marks its principal, whose beliefs are then
 * looked up by the principal's key (cheap, indexed). A sweep over every
 * principal runs at start and every `pollIntervalMs`, for beliefs written
 * elsewhere (an import, another sidecar that is down). Each sidecar embeds
 * its own writes, so sidecars sharing a database rarely embed the same
 * belief twice. While the embedder fails it backs off exponentially, and
 * writes do not wake it.
 */

/** Principals whose covered position is remembered; the oldest is forgotten (and rescanned in full when next written). */
const MAX_COVERED = 10_000;

function keyOf(p: Principal): string {
  return `${p.tenantId}\u0000${p.principalId}`;
}

export interface BackfillOptions {
  batch: number;
  pollIntervalMs: number;
  /** First retry delay after a failure; doubles per consecutive failure up to retryMaxMs. */
  retryMinMs: number;
  retryMaxMs: number;
  /** Beliefs above this sensitivity are never sent to the embedder. */
  sensitivityCeiling: SensitivityLevel;
  /**
   * Asked before each sweep over every principal: false skips it until the
   * next poll. The fleet's lease (store/maintenance-lease.ts), so one sidecar
   * sweeps per interval; a sidecar's own writes are embedded regardless.
   */
  claimSweep?: () => Promise<boolean>;
}

export class EmbeddingBackfill {
  private stopped = false;
  private readonly abort = new AbortController();
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | undefined;
  private failures = 0;
  /** Principals written through this sidecar whose new beliefs are not embedded yet. */
  private readonly dirty = new Map<string, Principal>();
  /** When the next sweep over every principal is due (0: now). */
  private sweepAt = 0;
  /** A sweep is under way (its lease was claimed): its next batches need no claim. */
  private sweeping = false;
  /** Per principal, a store position up to which everything embeddable is embedded (bounded; a forgotten one rescans). */
  private readonly covered = new Map<string, number>();
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

  /** A write happened: embed the principal's new beliefs now (without one: sweep now), unless backing off. */
  wake(principal?: Principal): void {
    if (principal) this.dirty.set(keyOf(principal), principal);
    else this.sweepAt = 0;
    this.wakeUp?.();
  }

  /** Stops after aborting the request in flight; what it had not saved is embedded by the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error("background embedder stopped"));
    this.wakeUp?.();
    await this.loop;
  }

  /**
   * Embeds and saves one batch, of one principal or of anyone's; returns how
   * many beliefs it handled. Throws when the embedder or the store fails.
   */
  async embedBatch(signal?: AbortSignal, principal?: Principal, afterPosition = 0): Promise<number> {
    const missing = await this.store.missingEmbeddings(this.embedder.id, this.options.sensitivityCeiling, this.options.batch, {
      exclude: [...this.refused],
      ...(principal ? { principal, afterPosition } : {}),
    });
    if (missing.length === 0) return 0;
    let vectors: (number[] | null)[];
    try {
      vectors = await this.embedDocuments(missing, signal);
    } catch (error) {
      if (!(error instanceof EmbedderError && error.rejectedInput)) throw error;
      // One document the endpoint refuses (too long for the model, say) must not hold back the rest.
      vectors = [];
      for (const m of missing) vectors.push(await this.embedAlone(m, signal));
    }
    await this.store.saveEmbeddings(
      this.embedder.id,
      missing.flatMap((m, i) => (vectors[i] ? [{ ...m, vector: vectors[i] }] : [])),
    );
    return missing.length;
  }

  /**
   * Each belief's document vector (document-vector.ts): its statement and
   * source context embedded in one request, part by part, then summed with
   * the lexical fields' weights.
   */
  private async embedDocuments(missing: readonly MissingEmbedding[], signal: AbortSignal | undefined): Promise<number[][]> {
    const parts = missing.map((m) => documentParts(m, this.store.document));
    const flat = await this.embedder.embed(
      parts.flatMap((ps) => ps.map((p) => p.text)),
      signal,
      "document",
    );
    let at = 0;
    return parts.map((ps) => {
      const vectors = flat.slice(at, (at += ps.length));
      return documentVector(
        vectors,
        ps.map((p) => p.weight),
      );
    });
  }

  private async embedAlone(m: MissingEmbedding, signal: AbortSignal | undefined): Promise<number[] | null> {
    try {
      const [vector] = await this.embedDocuments([m], signal);
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
      // Written principals first; the sweep when it is due; otherwise wait for either.
      const principal = this.takeDirty();
      if (!principal && Date.now() < this.sweepAt) {
        await this.sleep(this.sweepAt - Date.now(), true);
        continue;
      }
      try {
        if (principal) await this.embedPrincipal(principal);
        else if (!this.sweeping && this.options.claimSweep && !(await this.options.claimSweep())) {
          this.sweepAt = Date.now() + this.options.pollIntervalMs;
        } else {
          this.sweeping = true;
          if ((await this.embedBatch(this.abort.signal)) < this.options.batch) {
            this.sweeping = false;
            this.sweepAt = Date.now() + this.options.pollIntervalMs;
          }
        }
        if (this.failures > 0) this.logger.info({ failures: this.failures }, "background embedder recovered");
        this.failures = 0;
      } catch (err) {
        if (this.stopped) break;
        if (principal) this.dirty.set(keyOf(principal), principal);
        this.failures++;
        const retryMs = Math.min(this.options.retryMaxMs, this.options.retryMinMs * 2 ** (this.failures - 1));
        // The first failure of a streak is a warning; the rest would repeat it every retry.
        if (this.failures === 1) this.logger.warn({ err, retryMs }, "background embedder failed; retrying with backoff");
        else this.logger.debug({ err, failures: this.failures, retryMs }, "background embedder still failing");
        await this.sleep(retryMs, false);
      }
    }
  }

  /**
   * One batch of a written principal's beliefs, from the position already
   * covered. The head is read first: every belief at or below it is
   * committed, so once a pass comes back short, all of them are covered.
   */
  private async embedPrincipal(principal: Principal): Promise<void> {
    const key = keyOf(principal);
    const head = await this.store.headPosition(principal);
    const n = await this.embedBatch(this.abort.signal, principal, this.covered.get(key) ?? 0);
    // A full batch means more are waiting.
    if (n >= this.options.batch) {
      this.wake(principal);
      return;
    }
    this.covered.delete(key);
    this.covered.set(key, head);
    if (this.covered.size > MAX_COVERED) this.covered.delete(this.covered.keys().next().value!);
  }

  private takeDirty(): Principal | undefined {
    const first = this.dirty.entries().next();
    if (first.done) return undefined;
    this.dirty.delete(first.value[0]);
    return first.value[1];
  }

  /** Waits `ms`; a wake ends the wait early only when `wakeable` (never during a backoff); stop always does. */
  private async sleep(ms: number, wakeable: boolean): Promise<void> {
    const wait = new AbortController();
    this.wakeUp = () => {
      if (this.stopped || wakeable) wait.abort();
    };
    try {
      await delay(Math.max(0, ms), undefined, { signal: wait.signal, ref: false });
    } catch {
      // Woken or stopped.
    } finally {
      this.wakeUp = null;
    }
  }
}

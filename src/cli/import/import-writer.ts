import { createClient, type Transport } from "@connectrpc/connect";
import type { Config } from "../../config/config.js";
import type { Principal } from "../../domain/model.js";
import { MemoryWriteService } from "../../gen/memory/v1/write_service_pb.js";
import { createLogger } from "../../log/logger.js";
import { withDeadline } from "../../sdk/retry.js";
import { openStore } from "../../store/open-store.js";
import type { Checked } from "./checked-records.js";

/**
 * Where an import writes: a store opened directly, or a running sidecar over
 * gRPC (PutBeliefs / AppendEpisodes). Each batch is one transaction either
 * way: written whole or not at all.
 */
export interface ImportWriter {
  /** Returns the episodes newly appended. */
  appendEpisodes(batch: Checked["episodes"]): Promise<number>;
  /** Returns the beliefs inserted or changed. */
  putBeliefs(batch: Checked["beliefs"]): Promise<number>;
  close(): Promise<void>;
}

export async function storeWriter(config: Config, principal: Principal): Promise<ImportWriter> {
  const store = await openStore(config.store, createLogger(config.logLevel === "info" ? "warn" : config.logLevel));
  return {
    appendEpisodes: async (batch) => (await store.appendEpisodes(principal, batch.map((e) => e.value))).appended,
    putBeliefs: async (batch) => (await store.putBeliefs(principal, batch.map((b) => b.value))).written,
    async close() {
      await store.analyzeIfEmbedded();
      await store.db.close();
    },
  };
}

/** An UNAVAILABLE batch is sent again (the sidecar answers it when nothing was written), a few times. */
const RETRY = { maxAttempts: 5, initialBackoffMs: 200 };

export function sidecarWriter(transport: Transport, close: () => void, headers: () => Promise<Record<string, string>>, deadlineMs: number): ImportWriter {
  const client = createClient(MemoryWriteService, transport);
  return {
    appendEpisodes: async (batch) =>
      (
        await withDeadline("MemoryWriteService.AppendEpisodes", deadlineMs, RETRY, async (timeoutMs) =>
          client.appendEpisodes({ episodes: batch.map((e) => e.message) }, { timeoutMs, headers: await headers() }),
        )
      ).appended,
    putBeliefs: async (batch) =>
      (
        await withDeadline("MemoryWriteService.PutBeliefs", deadlineMs, RETRY, async (timeoutMs) =>
          client.putBeliefs({ beliefs: batch.map((b) => b.message) }, { timeoutMs, headers: await headers() }),
        )
      ).written,
    close: async () => close(),
  };
}

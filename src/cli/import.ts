import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Config } from "../config.js";
import { createLogger } from "../logger.js";
import { addRecord, writeBatch, type ImportBatch } from "../store/import-records.js";
import { openStore } from "../store/open-store.js";

/**
 * `recall import FILE.jsonl --tenant T --principal P`: one JSON object per
 * line, `{"belief": {...}}` or `{"episode": {...}}`, fields in protobuf JSON
 * (snake_case or lowerCamelCase, enums by name, times in RFC 3339). The whole
 * file is validated before anything is written; then it is written in
 * batches, each one transaction. Writes go straight to the configured store
 * (stop a sidecar that uses the same PGlite directory first).
 */
export async function runImport(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: "string", default: process.env.RECALL_TENANT_ID },
      principal: { type: "string", default: process.env.RECALL_PRINCIPAL_ID },
    },
  });
  const file = positionals[0];
  if (!file || !values.tenant || !values.principal) {
    process.stderr.write("usage: recall import FILE.jsonl --tenant T --principal P\n");
    return 2;
  }
  const now = new Date();
  const batch: ImportBatch = { beliefs: [], episodes: [] };
  let lineNo = 0;
  try {
    for await (const line of createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })) {
      lineNo += 1;
      if (line.trim() === "") continue;
      addRecord(batch, JSON.parse(line) as Record<string, JsonValue>, now);
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`recall import: ${file}:${lineNo}: ${reason}\nnothing was written\n`);
    return 1;
  }

  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  const store = await openStore(config.store, logger);
  const principal = { tenantId: values.tenant, principalId: values.principal };
  try {
    const { written, appended } = await writeBatch(store, principal, batch);
    await store.analyzeIfEmbedded();
    process.stdout.write(`imported ${written} beliefs (of ${batch.beliefs.length}) and ${appended} episodes (of ${batch.episodes.length})\n`);
    return 0;
  } finally {
    await store.db.close();
  }
}

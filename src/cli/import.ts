import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { Config } from "../config.js";
import { InvalidArgumentError } from "../domain/errors.js";
import type { Belief, Episode } from "../domain/model.js";
import { BeliefSchema, EpisodeSchema } from "../gen/memory/v1/types_pb.js";
import { createLogger } from "../logger.js";
import * as validate from "../server/validate.js";
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
  const beliefs: Belief[] = [];
  const episodes: Episode[] = [];
  let lineNo = 0;
  try {
    for await (const line of createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })) {
      lineNo += 1;
      if (line.trim() === "") continue;
      const record = JSON.parse(line) as Record<string, JsonValue>;
      if (record.belief !== undefined) {
        beliefs.push(validate.belief(fromJson(BeliefSchema, record.belief), "belief", now));
      } else if (record.episode !== undefined) {
        episodes.push(validate.episode(fromJson(EpisodeSchema, record.episode), "episode"));
      } else {
        throw new InvalidArgumentError("line", 'must hold a "belief" or an "episode" object');
      }
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
    let written = 0;
    let appended = 0;
    // Episodes first, so beliefs that cite them find their sources.
    for (let i = 0; i < episodes.length; i += validate.MAX_BATCH) {
      appended += (await store.appendEpisodes(principal, episodes.slice(i, i + validate.MAX_BATCH))).appended;
    }
    for (let i = 0; i < beliefs.length; i += validate.MAX_BATCH) {
      written += (await store.putBeliefs(principal, beliefs.slice(i, i + validate.MAX_BATCH))).written;
    }
    await store.analyzeIfEmbedded();
    process.stdout.write(`imported ${written} beliefs (of ${beliefs.length}) and ${appended} episodes (of ${episodes.length})\n`);
    return 0;
  } finally {
    await store.db.close();
  }
}

import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Config } from "../config/config.js";
import type { Belief, Episode } from "../domain/model.js";
import * as validate from "../server/wire/validate.js";
import { createLogger } from "../log/logger.js";
import { addRecord } from "../server/wire/import-records.js";
import { openStore } from "../store/open-store.js";
import { Progress } from "./progress.js";
import { PRINCIPAL_OPTIONS, principalFrom } from "./store-command.js";

/**
 * `recall import FILE.jsonl --tenant T --principal P`: one JSON object per
 * line, `{"belief": {...}}` or `{"episode": {...}}`, fields in protobuf JSON
 * (snake_case or lowerCamelCase, enums by name, times in RFC 3339). The whole
 * file is validated before anything is written, and every bad line is
 * reported (up to MAX_REPORTED); then it is written in batches, each one
 * transaction. Writes go straight to the configured store (stop a sidecar
 * that uses the same PGlite directory first).
 */

/** Bad lines reported by name; the rest are counted. */
export const MAX_REPORTED = 20;

export interface ParsedImport {
  beliefs: Belief[];
  episodes: Episode[];
  /** "FILE:LINE: reason", in line order, at most MAX_REPORTED. */
  errors: string[];
  badLines: number;
}

/** Validates every line of `text`; pure apart from the progress it reports. */
export function parseImport(file: string, text: string, now: Date, progress?: Progress): ParsedImport {
  const parsed: ParsedImport = { beliefs: [], episodes: [], errors: [], badLines: 0 };
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    progress?.tick();
    if (line.trim() === "") return;
    try {
      addRecord(parsed, JSON.parse(line) as Record<string, JsonValue>, now);
    } catch (error) {
      parsed.badLines += 1;
      if (parsed.errors.length < MAX_REPORTED) parsed.errors.push(`${file}:${index + 1}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return parsed;
}

export async function runImport(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: PRINCIPAL_OPTIONS });
  const file = positionals[0];
  const principal = principalFrom(values);
  if (!file || !principal || positionals.length > 1) {
    process.stderr.write("usage: recall import FILE.jsonl --tenant T --principal P\n");
    return 2;
  }
  const text = await readFile(file, "utf8");
  const checking = new Progress({ label: "recall import: validating", unit: "lines", total: text.split("\n").length });
  const { beliefs, episodes, errors, badLines } = parseImport(file, text, new Date(), checking);
  checking.done();
  if (badLines > 0) {
    const more = badLines > errors.length ? `\n… and ${badLines - errors.length} more bad lines` : "";
    process.stderr.write(`recall import: ${errors.join("\nrecall import: ")}${more}\n${badLines} bad lines; nothing was written\n`);
    return 1;
  }

  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  const store = await openStore(config.store, logger);
  const writing = new Progress({ label: "recall import: writing", unit: "records", total: beliefs.length + episodes.length });
  try {
    let written = 0;
    let appended = 0;
    // Episodes first, so beliefs that cite them find their sources.
    for (let i = 0; i < episodes.length; i += validate.MAX_BATCH) {
      const batch = episodes.slice(i, i + validate.MAX_BATCH);
      appended += (await store.appendEpisodes(principal, batch)).appended;
      writing.tick(batch.length);
    }
    for (let i = 0; i < beliefs.length; i += validate.MAX_BATCH) {
      const batch = beliefs.slice(i, i + validate.MAX_BATCH);
      written += (await store.putBeliefs(principal, batch)).written;
      writing.tick(batch.length);
    }
    writing.done();
    await store.analyzeIfEmbedded();
    process.stdout.write(`imported ${written} beliefs (of ${beliefs.length}) and ${appended} episodes (of ${episodes.length})\n`);
    return 0;
  } finally {
    await store.db.close();
  }
}

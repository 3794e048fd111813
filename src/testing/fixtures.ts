import { readFile } from "node:fs/promises";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Principal } from "../domain/model.js";
import { addRecord, writeBatch, type ImportBatch } from "../server/wire/import-records.js";
import type { MemoryStore } from "../store/memory-store.js";

/**
 * Fixtures for a testing sidecar: one principal's memory, in the format of
 * `recall import` (a JSONL file or text, one `{"belief": …}` or
 * `{"episode": …}` per line), or as the same objects.
 */
export interface Fixture {
  tenantId: string;
  principalId: string;
  /** Path of a JSONL file in the `recall import` format. */
  file?: string;
  /** JSONL text in the same format. */
  jsonl?: string;
  /** The same records as objects: `{ belief: {...} }` or `{ episode: {...} }`, fields in protobuf JSON. */
  records?: ReadonlyArray<{ belief?: JsonValue; episode?: JsonValue }>;
}

export interface LoadedFixture {
  principal: Principal;
  batch: ImportBatch;
}

/** Reads and validates every fixture before anything is written; an error names the fixture, line and field. */
export async function parseFixtures(fixtures: readonly Fixture[], now: Date): Promise<LoadedFixture[]> {
  const loaded: LoadedFixture[] = [];
  for (const [i, f] of fixtures.entries()) {
    const batch: ImportBatch = { beliefs: [], episodes: [] };
    const lines = [...(f.file ? (await readFile(f.file, "utf8")).split("\n") : []), ...(f.jsonl ? f.jsonl.split("\n") : [])];
    const records: [string, Record<string, JsonValue>][] = [];
    lines.forEach((line, n) => {
      if (line.trim() !== "") records.push([`line ${n + 1}`, parseLine(line, `fixtures[${i}] line ${n + 1}`)]);
    });
    (f.records ?? []).forEach((r, n) => records.push([`records[${n}]`, r as Record<string, JsonValue>]));
    for (const [where, record] of records) {
      try {
        addRecord(batch, record, now);
      } catch (error) {
        throw new Error(`fixtures[${i}] ${where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    loaded.push({ principal: { tenantId: f.tenantId, principalId: f.principalId }, batch });
  }
  return loaded;
}

export async function writeFixtures(store: MemoryStore, fixtures: readonly LoadedFixture[]): Promise<void> {
  for (const f of fixtures) await writeBatch(store, f.principal, f.batch);
}

function parseLine(line: string, where: string): Record<string, JsonValue> {
  try {
    return JSON.parse(line) as Record<string, JsonValue>;
  } catch (error) {
    throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";
import type { Belief, Episode, Principal } from "../../domain/model.js";
import { BeliefSchema, EpisodeSchema } from "../../gen/memory/v1/types_pb.js";
import * as validate from "./validate.js";
import type { MemoryStore } from "../../store/memory-store.js";

/**
 * The import format, shared by `recall import` and the testing entry point's
 * fixtures: one object per record, `{"belief": {...}}` or `{"episode": {...}}`,
 * in protobuf JSON, validated as the write RPCs validate.
 */

export interface ImportBatch {
  beliefs: Belief[];
  episodes: Episode[];
}

/** Adds one record to `into`; throws InvalidArgumentError (or the JSON decoder's error) for a bad one. */
export function addRecord(into: ImportBatch, record: Record<string, JsonValue>, now: Date): void {
  if (record.belief !== undefined) {
    into.beliefs.push(validate.belief(fromJson(BeliefSchema, record.belief), "belief", now));
  } else if (record.episode !== undefined) {
    into.episodes.push(validate.episode(fromJson(EpisodeSchema, record.episode), "episode"));
  } else {
    throw new InvalidArgumentError("line", 'must hold a "belief" or an "episode" object');
  }
}

/** Writes a validated batch in store transactions of at most MAX_BATCH rows: episodes first, so beliefs find their sources. */
export async function writeBatch(store: MemoryStore, p: Principal, batch: ImportBatch): Promise<{ written: number; appended: number }> {
  let written = 0;
  let appended = 0;
  for (let i = 0; i < batch.episodes.length; i += validate.MAX_BATCH) {
    appended += (await store.appendEpisodes(p, batch.episodes.slice(i, i + validate.MAX_BATCH))).appended;
  }
  for (let i = 0; i < batch.beliefs.length; i += validate.MAX_BATCH) {
    written += (await store.putBeliefs(p, batch.beliefs.slice(i, i + validate.MAX_BATCH))).written;
  }
  return { written, appended };
}

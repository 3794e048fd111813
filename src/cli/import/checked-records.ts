import { fromJson } from "@bufbuild/protobuf";
import type { Belief, Episode } from "../../domain/model.js";
import { BeliefSchema, EpisodeSchema, type Belief as BeliefMessage, type Episode as EpisodeMessage } from "../../gen/memory/v1/types_pb.js";
import * as validate from "../../server/wire/validate.js";
import type { Located, Rejected } from "./peer-record.js";

/**
 * The mapped records checked as the write RPCs check them, before anything
 * is written, so every bad record is reported with its line (and the peer's
 * path) rather than failing a batch on the server. Each good record keeps its
 * message (sent over gRPC) and its domain form (written to a store directly).
 */

export interface Checked {
  /** In write order: episodes first, so beliefs that cite them find their sources. */
  episodes: { line: number; message: EpisodeMessage; value: Episode }[];
  beliefs: { line: number; message: BeliefMessage; value: Belief }[];
  rejected: Rejected[];
}

export function checkRecords(records: readonly Located[], rejected: readonly Rejected[], now: Date): Checked {
  const checked: Checked = { episodes: [], beliefs: [], rejected: [...rejected] };
  const seen = new Map<string, number>();
  for (const { line, at, record } of records) {
    const where = at === "" ? "" : `${at} → `;
    try {
      if ("belief" in record) {
        const message = fromJson(BeliefSchema, record.belief);
        const value = validate.belief(message, "belief", now);
        if (once(seen, `b:${value.beliefId}`, line, checked, where)) checked.beliefs.push({ line, message, value });
      } else {
        const message = fromJson(EpisodeSchema, record.episode);
        const value = validate.episode(message, "episode");
        if (once(seen, `e:${value.episodeId}`, line, checked, where)) checked.episodes.push({ line, message, value });
      }
    } catch (error) {
      checked.rejected.push({ line, message: `${where}${error instanceof Error ? error.message : String(error)}` });
    }
  }
  checked.rejected.sort((a, b) => a.line - b.line);
  return checked;
}

/** A second record with an id already in the file would silently replace the first: it is a bad record. */
function once(seen: Map<string, number>, key: string, line: number, checked: Checked, where: string): boolean {
  const first = seen.get(key);
  if (first === undefined) {
    seen.set(key, line);
    return true;
  }
  const field = key.startsWith("b:") ? "belief.belief_id" : "episode.episode_id";
  checked.rejected.push({ line, message: `${where}${field}: duplicates the record on line ${first}` });
  return false;
}

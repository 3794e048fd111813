import type { Checked } from "./checked-records.js";
import type { ImportWriter } from "./import-writer.js";
import { writePosition } from "./position-file.js";

/**
 * The write phase of an import: the checked records in batches, from record
 * `from` on (an earlier run's position), each acknowledged batch counted and,
 * with a position file, recorded. A stop request (Ctrl-C) is honoured
 * between batches, so a batch is never cut in half.
 */

export interface WriteRun {
  batchSize: number;
  from: number;
  /** Where the position is kept (--resume), and the fingerprint it is tied to. */
  position?: { path: string; fingerprint: string } | undefined;
  /** Told the records each acknowledged batch held. */
  onBatch: (records: number) => void;
  /** Asked before each batch. */
  stopRequested: () => boolean;
}

export interface Written {
  /** Records acknowledged from the start, an earlier run's included. */
  done: number;
  appended: number;
  written: number;
  /** The error a batch failed with, when one did. */
  failure?: unknown;
}

export async function writeBatches(writer: ImportWriter, checked: Checked, run: WriteRun): Promise<Written> {
  const total = checked.episodes.length + checked.beliefs.length;
  const result: Written = { done: run.from, appended: 0, written: 0 };
  try {
    for (const batch of batches(checked, run.batchSize, run.from)) {
      if (run.stopRequested()) break;
      if (batch.kind === "episodes") result.appended += await writer.appendEpisodes(batch.items);
      else result.written += await writer.putBeliefs(batch.items);
      result.done += batch.items.length;
      run.onBatch(batch.items.length);
      if (run.position) await writePosition(run.position.path, { version: 1, fingerprint: run.position.fingerprint, done: result.done, total });
    }
  } catch (error) {
    result.failure = error;
  }
  return result;
}

type Batch = { kind: "episodes"; items: Checked["episodes"] } | { kind: "beliefs"; items: Checked["beliefs"] };

/** Episodes first (beliefs that cite them find their sources), then beliefs; from record `from` on. A batch holds one kind. */
function* batches(checked: Checked, size: number, from: number): Generator<Batch> {
  for (let i = Math.min(from, checked.episodes.length); i < checked.episodes.length; i += size) yield { kind: "episodes", items: checked.episodes.slice(i, i + size) };
  for (let i = Math.max(0, from - checked.episodes.length); i < checked.beliefs.length; i += size) yield { kind: "beliefs", items: checked.beliefs.slice(i, i + size) };
}

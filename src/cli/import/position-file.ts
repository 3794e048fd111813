import { createHash } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { UsageError } from "../usage-error.js";

/**
 * `recall import --resume FILE`: how many of the run's records (episodes
 * first, then beliefs, in file order) the store or sidecar has acknowledged.
 * Written after each acknowledged batch, atomically (a new file renamed over
 * the old); a rerun with the same FILE starts after them. The fingerprint
 * (the input's bytes, the mapping settings, the principal) makes sure the
 * position is applied to the same records only. A batch that was written but
 * not yet recorded here when the run stopped is sent again: writes are
 * idempotent by id, so that rewrites nothing.
 */

export interface Position {
  version: 1;
  fingerprint: string;
  /** Records acknowledged, from the start. */
  done: number;
  total: number;
}

export function fingerprint(input: string, settings: unknown): string {
  return createHash("sha256").update(input).update("\0").update(JSON.stringify(settings)).digest("hex");
}

/** Records already done by an earlier run with this position file (0 when there is none yet). */
export async function readPosition(path: string, expected: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  let position: Partial<Position>;
  try {
    position = JSON.parse(text) as Partial<Position>;
  } catch {
    throw new UsageError(`--resume ${path} is not a position file recall import wrote`);
  }
  if (position.version !== 1 || typeof position.done !== "number" || typeof position.fingerprint !== "string") {
    throw new UsageError(`--resume ${path} is not a position file recall import wrote`);
  }
  if (position.fingerprint !== expected) {
    throw new UsageError(`--resume ${path} belongs to another import (another file, other settings or another principal); give a new position file`);
  }
  return position.done;
}

export async function writePosition(path: string, position: Position): Promise<void> {
  const next = `${path}.${process.pid}.tmp`;
  await writeFile(next, `${JSON.stringify(position)}\n`, { mode: 0o600 });
  await rename(next, path);
}

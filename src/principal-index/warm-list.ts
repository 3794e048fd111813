import { mkdir, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import type { Principal } from "../domain/model.js";
import { principalKey } from "../domain/principal-key.js";
import { PRIVATE_DIR_MODE, writePrivateFile } from "../store/private-files.js";

/**
 * The warm list: the principals whose indexes this sidecar held, most
 * recently used first, with their approximate bytes. A sidecar writes it to
 * its data directory while it runs and when it stops; a restarted sidecar
 * loads those indexes in the background, so the principals it served
 * before find their index instead of SQL at their first call.
 */

export interface WarmEntry extends Principal {
  /** The index's approximate bytes when the list was written. */
  bytes: number;
}

export const WARM_LIST_FILE = "warm-principals.json";

const warmListSchema = z.object({
  version: z.literal(1),
  principals: z.array(z.object({ tenantId: z.string().min(1), principalId: z.string().min(1), bytes: z.number().int().min(0) })),
});

/** The list as written to disk. */
export function serializeWarmList(entries: readonly WarmEntry[]): string {
  const principals = entries.map(({ tenantId, principalId, bytes }) => ({ tenantId, principalId, bytes }));
  return `${JSON.stringify({ version: 1, principals })}\n`;
}

/** Throws on anything but a list this version wrote. */
export function parseWarmList(text: string): WarmEntry[] {
  return warmListSchema.parse(JSON.parse(text)).principals;
}

/**
 * The principals to load, most recent first, while their recorded bytes fit
 * in `maxBytes` together (RECALL_INDEX_MB): the same ones the bounded LRU
 * would have kept. Stops at the first that does not fit, so a lowered bound
 * keeps the most recent principals, not whichever are small.
 */
export function principalsToWarm(entries: readonly WarmEntry[], maxBytes: number): WarmEntry[] {
  const out: WarmEntry[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const e of entries) {
    const key = principalKey(e);
    if (seen.has(key)) continue;
    if (bytes + e.bytes > maxBytes) break;
    seen.add(key);
    bytes += e.bytes;
    out.push(e);
  }
  return out;
}

/** The list at `path`; none (an empty list) when the file does not exist. */
export async function readWarmList(path: string): Promise<WarmEntry[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return parseWarmList(text);
}

/** Written beside and renamed over: a crash mid-write leaves the previous list, never half of one. */
export async function writeWarmList(path: string, text: string): Promise<void> {
  // It names the principals of this sidecar: the process user's alone (the folder is checked at start).
  await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  const partial = `${path}.${process.pid}.tmp`;
  await writePrivateFile(partial, text);
  await rename(partial, path);
}

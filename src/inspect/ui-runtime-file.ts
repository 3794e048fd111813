import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * How `recall ui` finds a running sidecar's page, as `jupyter server list`
 * does: a sidecar serving the inspector writes its address (with the
 * per-start token) to a file only this user can read, named by its port,
 * and removes it when it stops.
 */

export interface UiRecord {
  pid: number;
  url: string;
}

function runtimeDir(): string {
  return join(process.env.XDG_RUNTIME_DIR ?? join(homedir(), ".cache"), "recall");
}

export function recordPath(port: number): string {
  return join(runtimeDir(), `ui-${port}.json`);
}

export async function writeUiRecord(port: number, record: UiRecord): Promise<void> {
  await mkdir(runtimeDir(), { recursive: true, mode: 0o700 });
  const path = recordPath(port);
  await writeFile(path, JSON.stringify(record), { mode: 0o600 });
  await chmod(path, 0o600);
}

export async function removeUiRecord(port: number): Promise<void> {
  await rm(recordPath(port), { force: true });
}

/** The record of a sidecar still running on `port`, or null (a stale file is removed). */
export async function readUiRecord(port: number): Promise<UiRecord | null> {
  const text = await readFile(recordPath(port), "utf8").catch(() => null);
  if (text === null) return null;
  try {
    const record = JSON.parse(text) as UiRecord;
    process.kill(record.pid, 0);
    return record;
  } catch {
    await removeUiRecord(port);
    return null;
  }
}

import { readFileSync, unlinkSync } from "node:fs";
import { open, readFile, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

/**
 * One process at a time on a PGlite data directory. PGlite is an embedded
 * PostgreSQL without a postmaster: two processes opening one directory both
 * start, and each overwrites the other's pages (acknowledged writes lost).
 *
 * The lock is a file in the directory, created exclusively, naming its
 * holder (pid, host, the process's start time). A lock whose holder is gone
 * (killed with SIGKILL, say) is stale and taken over; a holder is gone when
 * it is on this host and no process with that pid and start time is running.
 * A lock from another host is never taken over: remove the file by hand once
 * that host is known to be down. See docs/adr/0003-store-deadlines.md.
 */

export const LOCK_FILE = "recall.lock";

interface Holder {
  pid: number;
  host: string;
  /** Process start time in clock ticks since boot (Linux), telling a reused pid from its first owner. */
  startTicks: string | null;
  since: string;
}

export class DataDirLockedError extends Error {
  override readonly name = "DataDirLockedError";
  constructor(
    readonly dataDir: string,
    readonly holder: Holder,
  ) {
    super(
      `data directory ${dataDir} is in use by another recall process (pid ${holder.pid} on ${holder.host}, since ${holder.since}); ` +
        "stop it, or point RECALL_DATA_DIR elsewhere",
    );
  }
}

/** Directories this process holds, so that a lock with our own pid is told apart from a stale one. */
const heldHere = new Set<string>();

/** Takes the directory's lock; resolves to its release. Throws DataDirLockedError when a live process holds it. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_FILE);
  const me: Holder = { pid: process.pid, host: hostname(), startTicks: startTicks(process.pid), since: new Date().toISOString() };
  const content = JSON.stringify(me);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, "wx", 0o600);
      await file.writeFile(content);
      await file.sync();
      await file.close();
      heldHere.add(path);
      // A crash that still runs exit handlers (an uncaught error) leaves no lock behind.
      const onExit = () => releaseSync(path, content);
      process.once("exit", onExit);
      return async () => {
        process.off("exit", onExit);
        heldHere.delete(path);
        if ((await readFile(path, "utf8").catch(() => "")) === content) await unlink(path).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const existing = await readFile(path, "utf8").catch(() => null);
    if (existing === null) continue; // released meanwhile
    const holder = parse(existing);
    if (holder && isAlive(path, holder)) throw new DataDirLockedError(dataDir, holder);
    if (!holder && attempt === 0) {
      // Being written right now by its holder: look again in a moment.
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    // Stale: removed only if it is still the same file (another process may have taken it over meanwhile).
    if ((await readFile(path, "utf8").catch(() => null)) === existing) await unlink(path).catch(() => {});
  }
  const holder = parse((await readFile(path, "utf8").catch(() => "")) ?? "");
  throw new DataDirLockedError(dataDir, holder ?? { pid: 0, host: "unknown", startTicks: null, since: "unknown" });
}

function isAlive(path: string, holder: Holder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return heldHere.has(path);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // Alive, unless the pid now belongs to a process started at another time (pids are reused).
  const ticks = startTicks(holder.pid);
  return holder.startTicks === null || ticks === null || ticks === holder.startTicks;
}

/** Field 22 of /proc/PID/stat (Linux); null elsewhere. */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: count from the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function parse(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return typeof h.pid === "number" && typeof h.host === "string"
      ? { pid: h.pid, host: h.host, startTicks: h.startTicks ?? null, since: h.since ?? "unknown" }
      : null;
  } catch {
    return null;
  }
}

function releaseSync(path: string, content: string): void {
  try {
    if (readFileSync(path, "utf8") === content) unlinkSync(path);
  } catch {
    // Already gone.
  }
}

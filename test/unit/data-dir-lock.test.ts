import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirLockedError, LOCK_FILE, lockDataDir } from "../../src/store/pglite/data-dir-lock.js";

describe("lockDataDir", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-lockunit-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const plant = (holder: object) => writeFile(join(dir, LOCK_FILE), JSON.stringify(holder));

  it("refuses a directory this process already holds, and frees it on release", async () => {
    const release = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirLockedError);
    await release();
    await (await lockDataDir(dir))();
  });

  it("refuses a lock held by a running process, naming the directory and the pid", async () => {
    await plant({ pid: process.ppid, host: hostname(), startTicks: null, since: "2026-01-01T00:00:00Z" });
    const error = await lockDataDir(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as Error).message).toContain(dir);
    expect((error as Error).message).toContain(`pid ${process.ppid}`);
  });

  it("takes over a lock whose holder is gone, or whose pid now belongs to another process", async () => {
    await plant({ pid: 2 ** 22 + 12345, host: hostname(), startTicks: null, since: "x" });
    await (await lockDataDir(dir))();
    // Our own pid, not held here: a restarted container's sidecar often has its predecessor's pid.
    await plant({ pid: process.pid, host: hostname(), startTicks: "1", since: "x" });
    await (await lockDataDir(dir))();
    // A live pid with another start time: reused.
    await plant({ pid: process.ppid, host: hostname(), startTicks: "1", since: "x" });
    const release = await lockDataDir(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), "utf8")).pid).toBe(process.pid);
    await release();
  });

  it("never takes over a lock from another host", async () => {
    await plant({ pid: 1, host: `not-${hostname()}`, startTicks: null, since: "x" });
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirLockedError);
  });
});

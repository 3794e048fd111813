import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SENSITIVITY, type RecallTrace } from "../../src/domain/model.js";
import { SPOOL_FILE, SpoolFullError, TraceSpool } from "../../src/trace/trace-spool.js";

/** The outage spool's file (issue 38, item 7): durable lines, in order, none lost to a truncation. */

const principal = { tenantId: "t", principalId: "p" };
const trace = (id: string) => ({ id, createdAt: new Date("2026-12-05T10:00:00Z"), sensitivityCeiling: SENSITIVITY.personal }) as unknown as RecallTrace;

describe("TraceSpool", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-spool-unit-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("gives traces back in order, with their dates, and keeps what was appended during a truncation", async () => {
    const spool = await TraceSpool.open(dir, 1024 * 1024);
    await spool.append([{ principal, trace: trace("a") }, { principal, trace: trace("b") }]);
    const first = await spool.read(10);
    expect(first.items.map((i) => i.trace.id)).toEqual(["a", "b"]);
    expect(first.items[0]!.trace.createdAt).toEqual(new Date("2026-12-05T10:00:00Z"));
    spool.advance(first.next);
    // A recall spools its trace while the replayed file is being truncated, at every point of it.
    for (let round = 0; round < 40; round++) {
      const id = `c${round}`;
      const truncation = spool.truncateIfDrained();
      for (let i = 0; i < round % 4; i++) await Promise.resolve();
      if (round % 8 >= 4) await new Promise((r) => setImmediate(r));
      await Promise.all([truncation, spool.append([{ principal, trace: trace(id) }])]);
      const { items, next } = await spool.read(10);
      expect(items.map((i) => i.trace.id), `round ${round}`).toEqual([id]);
      spool.advance(next);
    }
    await spool.close();
  });

  it("refuses an append past its cap, and cuts a line torn by a crash when opened", async () => {
    const spool = await TraceSpool.open(dir, 300);
    await spool.append([{ principal, trace: trace("a") }]);
    await expect(spool.append(Array.from({ length: 5 }, (_, i) => ({ principal, trace: trace(`x${i}`) })))).rejects.toBeInstanceOf(SpoolFullError);
    await spool.close();
    const path = join(dir, SPOOL_FILE);
    await writeFile(path, (await readFile(path, "utf8")) + '{"principal":{"ten');
    const reopened = await TraceSpool.open(dir, 300);
    expect((await reopened.read(10)).items.map((i) => i.trace.id)).toEqual(["a"]);
    await reopened.close();
  });
});

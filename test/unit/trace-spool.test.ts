import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecallTrace } from "../../src/domain/model.js";
import { encodeRecord, type SpooledRecord } from "../../src/trace/spool-record.js";
import { joinRankedTexts } from "../../src/trace/spooled-ranked.js";
import { QUARANTINE_FILE, SPOOL_FILE, SpoolFullError, TraceSpool, type QuarantinedRecord } from "../../src/trace/trace-spool.js";
import { recallTrace, recalledBelief } from "../store/store-helpers.js";

/**
 * The outage spool's file (issue 38, item 7; issue 44, item 2): durable
 * records, in order, none lost to a truncation, of any size; a damaged
 * record goes to quarantine and never holds back the ones behind it.
 */

const principal = { tenantId: "t", principalId: "p" };
const trace = (id: string, overrides: Partial<RecallTrace> = {}) => recallTrace({ id, ...overrides });
const ids = (items: readonly SpooledRecord[]) => items.map((i) => i.trace.id);

/** The line format of the spool before issue 44: one JSON trace per line, Dates as {"$date": ISO}. */
function firstFormatLine(t: RecallTrace): string {
  return (
    JSON.stringify({ principal, trace: t }, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      return raw instanceof Date ? { $date: raw.toISOString() } : value;
    }) + "\n"
  );
}

/** Reads and advances until the spool gives nothing more. */
async function drain(spool: TraceSpool): Promise<string[]> {
  const seen: string[] = [];
  for (;;) {
    const { items, next } = await spool.read(10);
    spool.advance(next);
    if (items.length === 0) return seen;
    seen.push(...ids(items));
  }
}

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
    expect(ids(first.items)).toEqual(["a", "b"]);
    expect(first.items[0]!.trace.createdAt).toEqual(new Date("2026-03-04T05:06:08.123Z"));
    spool.advance(first.next);
    // A recall spools its trace while the replayed file is being truncated, at every point of it.
    for (let round = 0; round < 40; round++) {
      const id = `c${round}`;
      const truncation = spool.truncateIfDrained();
      for (let i = 0; i < round % 4; i++) await Promise.resolve();
      if (round % 8 >= 4) await new Promise((r) => setImmediate(r));
      await Promise.all([truncation, spool.append([{ principal, trace: trace(id) }])]);
      const { items, next } = await spool.read(10);
      expect(ids(items), `round ${round}`).toEqual([id]);
      spool.advance(next);
    }
    await spool.close();
  });

  it("refuses an append past its cap, and cuts a record torn by a crash when opened", async () => {
    const spool = await TraceSpool.open(dir, 4000);
    await spool.append([{ principal, trace: trace("a") }]);
    await expect(spool.append(Array.from({ length: 5 }, (_, i) => ({ principal, trace: trace(`x${i}`) })))).rejects.toBeInstanceOf(SpoolFullError);
    await spool.close();
    const path = join(dir, SPOOL_FILE);
    const whole = await readFile(path);
    // Torn inside the payload, and torn inside the header: both are cut, the record before stays.
    for (const torn of [encodeRecord({ principal, trace: trace("b") }).subarray(0, 300), Buffer.from("RS1 12")]) {
      await writeFile(path, Buffer.concat([whole, torn]));
      const reopened = await TraceSpool.open(dir, 4000);
      expect(ids((await reopened.read(10)).items)).toEqual(["a"]);
      expect((await stat(path)).size).toBe(whole.length);
      await reopened.close();
    }
  });

  it("reads a record of any size, past the 1 MiB a read once took", async () => {
    const spool = await TraceSpool.open(dir, 64 * 1024 * 1024);
    const big = trace("big", { query: { ...trace("q").query, text: "x".repeat(3 * 1024 * 1024) } });
    await spool.append([{ principal, trace: trace("before") }, { principal, trace: big }, { principal, trace: trace("after") }]);
    const { items } = await spool.read(10);
    expect(ids(items)).toEqual(["before", "big", "after"]);
    expect(items[1]!.trace.query.text).toHaveLength(3 * 1024 * 1024);
    await spool.close();
  });

  it("spools a ranked list as ids and scores, and the texts join back exactly", async () => {
    const ranked = Array.from({ length: 100 }, (_, i) => recalledBelief(randomUUID(), { statement: `${i} ${"long statement ".repeat(550)}`, score: 1 / (i + 1) }));
    const t = trace("ranked", { ranked, returned: ranked.slice(0, 3).map((b) => b.beliefId) });
    const record = encodeRecord({ principal, trace: t });
    // 100 statements of 8,000 characters: 800 KB of text, spooled as about 42 KB.
    expect(record.length).toBeLessThan(48 * 1024);
    const spool = await TraceSpool.open(dir, 1024 * 1024);
    await spool.append([{ principal, trace: t }]);
    const { items } = await spool.read(10);
    const texts = new Map(ranked.map((b) => [b.beliefId, { subject: b.subject, statement: b.statement }]));
    const asked: string[] = [];
    const joined = await joinRankedTexts(items, async (p, beliefIds) => {
      asked.push(`${p.tenantId}/${p.principalId}:${beliefIds.length}`);
      return texts;
    });
    expect(joined.batch[0]!.trace).toEqual(t);
    expect(joined.unmatched).toBe(0);
    expect(asked).toEqual(["t/p:100"]);
    // A belief rewritten since the recall: its item does not take texts it was not ranked with.
    texts.set(ranked[5]!.beliefId, { subject: "Andy", statement: "rewritten" });
    const changed = await joinRankedTexts(items, async () => texts);
    expect(changed.unmatched).toBe(1);
    expect(changed.batch[0]!.trace.ranked![5]).toMatchObject({ beliefId: ranked[5]!.beliefId, subject: "", statement: "", score: ranked[5]!.score });
    await spool.close();
  });

  it("moves a damaged record to the quarantine file and reads the ones behind it", async () => {
    const quarantined: QuarantinedRecord[] = [];
    const path = join(dir, SPOOL_FILE);
    const good = (id: string) => encodeRecord({ principal, trace: trace(id) });
    const flipped = Buffer.from(good("flipped"));
    flipped[flipped.length - 20]! ^= 1; // a bit of the payload: the checksum no longer matches
    const badLength = Buffer.from(good("bad-length").toString("utf8").replace(/^RS1 \d+/, "RS1 99"));
    await writeFile(path, Buffer.concat([good("a"), flipped, good("b"), Buffer.from("garbage line\n"), badLength, good("c")]));
    const spool = await TraceSpool.open(dir, 1024 * 1024);
    spool.onQuarantine = (r) => quarantined.push(r);
    expect(spool.heldCount).toBe(4); // a, flipped, b, c: what the headers say (bad-length's does not fit)
    expect(await drain(spool)).toEqual(["a", "b", "c"]);
    expect(quarantined.map((q) => [q.traceId, q.reason])).toEqual([
      ["flipped", "checksum mismatch"],
      [undefined, "not a record"],
      ["bad-length", "a length that does not match"],
    ]);
    expect(spool.heldCount).toBe(0);
    const kept = await readFile(join(dir, QUARANTINE_FILE), "utf8");
    expect(kept).toContain("garbage line");
    expect(kept).toContain('"flipped"');
    expect(kept.match(/^# quarantined /gm)).toHaveLength(3);
    expect(await spool.truncateIfDrained()).toBe(true);
    await spool.close();
  });

  it("replays a spool of the first format (JSON lines), a bad line quarantined, and appends after it", async () => {
    const path = join(dir, SPOOL_FILE);
    await writeFile(path, firstFormatLine(trace("old-1")) + '{"principal": not json}\n' + firstFormatLine(trace("old-2")));
    const spool = await TraceSpool.open(dir, 1024 * 1024);
    const quarantined: QuarantinedRecord[] = [];
    spool.onQuarantine = (r) => quarantined.push(r);
    await spool.append([{ principal, trace: trace("new") }]);
    const { items } = await spool.read(10);
    expect(ids(items)).toEqual(["old-1", "old-2", "new"]);
    expect(items[0]!.trace.createdAt).toEqual(new Date("2026-03-04T05:06:08.123Z"));
    expect(quarantined).toHaveLength(1);
    await spool.close();
  });

  it("tells which principal's traces it holds, and when they are gone", async () => {
    const spool = await TraceSpool.open(dir, 1024 * 1024);
    await spool.append([{ principal, trace: trace("a", { turnId: "turn-a" }) }]);
    const mine = (k: { principalId: string; turnId: string }) => k.principalId === "p" && k.turnId === "turn-a";
    expect(spool.holds(mine)).toBe(true);
    expect(spool.holds((k) => k.principalId === "someone-else")).toBe(false);
    let gone = false;
    const whenGone = spool.whenGone(mine).then(() => (gone = true));
    const { next } = await spool.read(10);
    await Promise.resolve();
    expect(gone).toBe(false);
    spool.advance(next);
    await whenGone;
    expect(spool.holds(mine)).toBe(false);
    await spool.close();
  });
});

describe("the spool's files are private", () => {
  let dir: string;
  let umask: number;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-spool-perm-"));
    umask = process.umask(0); // the most permissive umask: modes must not depend on it
  });
  afterEach(async () => {
    process.umask(umask);
    await rm(dir, { recursive: true, force: true });
  });

  it("creates its folder 0700 and its files 0600, whatever the umask", async () => {
    const spoolDir = join(dir, "new", "spool");
    const spool = await TraceSpool.open(spoolDir, 1024 * 1024);
    await writeFile(join(spoolDir, SPOOL_FILE), "garbage\n", { flag: "a" });
    await spool.append([{ principal, trace: trace("a") }]);
    await drain(await TraceSpool.open(spoolDir, 1024 * 1024)); // quarantines the garbage line
    await spool.close();
    expect((await stat(spoolDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "new"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(spoolDir, SPOOL_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(join(spoolDir, QUARANTINE_FILE))).mode & 0o777).toBe(0o600);
  });

  it("makes a file of an earlier version 0600, and refuses a folder open to other users", async () => {
    const spoolDir = join(dir, "old");
    await mkdir(spoolDir, { mode: 0o700 });
    await writeFile(join(spoolDir, SPOOL_FILE), "", { mode: 0o644 });
    await (await TraceSpool.open(spoolDir, 1024)).close();
    expect((await stat(join(spoolDir, SPOOL_FILE))).mode & 0o777).toBe(0o600);
    await chmod(spoolDir, 0o755);
    await expect(TraceSpool.open(spoolDir, 1024)).rejects.toThrow(`the trace spool folder ${spoolDir} (RECALL_TRACE_SPOOL_DIR) is open to other users (mode 0755) and holds memory: run chmod 700 ${spoolDir}`);
  });
});

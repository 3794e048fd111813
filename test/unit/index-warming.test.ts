import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { serializeWarmList, WARM_LIST_FILE, writeWarmList, type WarmEntry } from "../../src/principal-index/warm-list.js";
import { startIndexWarming } from "../../src/sidecar/index-warming.js";
import { capturingLogger } from "../support/pipeline.js";

/** The warm list's writer and walker over a stand-in for the indexes (the real ones: test/integration/index-warming.test.ts). */
function fakeIndexes(held: WarmEntry[]) {
  const warmed: Principal[][] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    warmed,
    release,
    indexes: {
      recentFirst: () => held,
      warm: async (ps: readonly Principal[], stopped: () => boolean = () => false) => {
        warmed.push([...ps]);
        await gate;
        return stopped() ? 0 : ps.length;
      },
    },
  };
}

describe("index warming", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-warming-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("walks the last run's list within the byte bound, and keeps what it has not loaded yet in the list it writes", async () => {
    const last = [
      { tenantId: "t", principalId: "a", bytes: 60 },
      { tenantId: "t", principalId: "b", bytes: 30 },
      { tenantId: "t", principalId: "c", bytes: 30 },
    ];
    await writeWarmList(join(dir, WARM_LIST_FILE), serializeWarmList(last));
    const held = [{ tenantId: "t", principalId: "z", bytes: 10 }];
    const fake = fakeIndexes(held);
    const { logger } = capturingLogger();
    const warming = startIndexWarming(fake.indexes, dir, 100, logger);
    await delay(20);
    expect(fake.warmed.map((walk) => walk.map((p) => p.principalId))).toEqual([["a", "b"]]);
    // Stopped mid-walk: the list keeps what this run holds, then what it had still to load.
    await warming.stop();
    const written = JSON.parse(await readFile(join(dir, WARM_LIST_FILE), "utf8")) as { principals: WarmEntry[] };
    expect(written.principals.map((p) => p.principalId)).toEqual(["z", "a", "b"]);
    fake.release();
  });

  it("says once that it cannot write the list, however many times it tries", async () => {
    await mkdir(join(dir, WARM_LIST_FILE)); // a directory where the file should be: every write fails
    const fake = fakeIndexes([{ tenantId: "t", principalId: "a", bytes: 1 }]);
    fake.release();
    const { logger, lines } = capturingLogger();
    const warming = startIndexWarming(fake.indexes, dir, 100, logger, 10);
    await delay(120);
    await warming.stop();
    expect(lines.filter((l) => l.msg === "index warm list unreadable; no index is warmed")).toHaveLength(1);
    expect(lines.filter((l) => String(l.msg).startsWith("index warm list not written"))).toHaveLength(1);
  });
});

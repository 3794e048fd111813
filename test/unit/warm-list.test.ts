import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseWarmList, principalsToWarm, readWarmList, serializeWarmList, writeWarmList, type WarmEntry } from "../../src/principal-index/warm-list.js";

const entry = (principalId: string, bytes: number, tenantId = "t"): WarmEntry => ({ tenantId, principalId, bytes });

describe("the warm list", () => {
  it("keeps the most recent principals that fit in RECALL_INDEX_MB together, and stops at the first that does not", () => {
    const list = [entry("a", 40), entry("b", 50), entry("c", 30), entry("d", 5)];
    expect(principalsToWarm(list, 100).map((p) => p.principalId)).toEqual(["a", "b"]);
    expect(principalsToWarm(list, 200).map((p) => p.principalId)).toEqual(["a", "b", "c", "d"]);
    expect(principalsToWarm(list, 39)).toEqual([]);
    expect(principalsToWarm([], 100)).toEqual([]);
  });

  it("tells principals apart by tenant, and lists each once", () => {
    const list = [entry("a", 10, "t1"), entry("a", 10, "t2"), entry("a", 10, "t1")];
    expect(principalsToWarm(list, 100)).toEqual([entry("a", 10, "t1"), entry("a", 10, "t2")]);
  });

  it("reads back what it wrote, and refuses anything else", () => {
    const list = [entry("a", 40), entry("b", 50, "u")];
    expect(parseWarmList(serializeWarmList(list))).toEqual(list);
    expect(() => parseWarmList("{not json")).toThrow();
    expect(() => parseWarmList(JSON.stringify({ version: 2, principals: [] }))).toThrow();
    expect(() => parseWarmList(JSON.stringify({ version: 1, principals: [{ tenantId: "", principalId: "a", bytes: 1 }] }))).toThrow();
    expect(() => parseWarmList(JSON.stringify({ version: 1, principals: [{ tenantId: "t", principalId: "a", bytes: -1 }] }))).toThrow();
  });

  it("is an empty list when there is no file, and is written whole (no partial file left beside it)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recall-warm-list-"));
    try {
      const path = join(dir, "nested", "warm-principals.json");
      expect(await readWarmList(path)).toEqual([]);
      await writeWarmList(path, serializeWarmList([entry("a", 1)]));
      await writeWarmList(path, serializeWarmList([entry("b", 2)]));
      expect(await readWarmList(path)).toEqual([entry("b", 2)]);
      expect(await readdir(join(dir, "nested"))).toEqual(["warm-principals.json"]);
      expect(await readFile(path, "utf8")).toMatch(/\n$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

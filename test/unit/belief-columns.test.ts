import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Interner, uuidPrefix } from "../../src/principal-index/columns.js";

describe("belief columns", () => {
  it("orders ids by their uuid prefix, then the full id, exactly as their text orders them", () => {
    // Shared prefixes too: the prefix alone must never decide a pair it cannot tell apart.
    const ids = [
      ...Array.from({ length: 2_000 }, () => randomUUID()),
      "00000000-0000-4000-8000-000000000002",
      "00000000-0000-4000-8000-000000000001",
      "ffffffff-ffff-4fff-bfff-ffffffffffff",
      "ffffffff-ffff-4000-8000-000000000000",
    ];
    const byText = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const byPrefix = [...ids].sort((a, b) => uuidPrefix(a) - uuidPrefix(b) || (a < b ? -1 : a > b ? 1 : 0));
    expect(byPrefix).toEqual(byText);
    expect(uuidPrefix("ffffffff-ffff-4fff-bfff-ffffffffffff")).toBe(2 ** 48 - 1);
  });

  it("interns each string once, and finds only strings already seen", () => {
    const interner = new Interner();
    expect(interner.id("veetbot")).toBe(0);
    expect(interner.id("recall")).toBe(1);
    expect(interner.id("veetbot")).toBe(0);
    expect(interner.find("recall")).toBe(1);
    expect(interner.find("never seen")).toBe(-1);
    expect(interner.size).toBe(2);
  });
});

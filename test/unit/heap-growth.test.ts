import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from "../../src/sidecar/heap-growth.js";

describe("the sidecar process's heap growth", () => {
  it("is bounded unless node was started with its own bound", () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(["--enable-source-maps", "--max-old-space-size=512"])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    // An operator's own value wins, however V8 spells the flag.
    for (const own of ["--heap-growing-percent=20", "--heap_growing_percent=80", "--heap-growing-percent"]) expect(heapGrowthFlag(["--trace-gc", own])).toBeNull();
    // A flag that only starts the same way is not it.
    expect(heapGrowthFlag(["--heap-growing-percentage=5"])).not.toBeNull();
  });
});

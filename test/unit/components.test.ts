import { describe, expect, it } from "vitest";
import { Components } from "../../src/sidecar/components.js";

describe("the sidecar's components", () => {
  it("stop in reverse start order, each once, with the stop options", async () => {
    const parts = new Components();
    const log: string[] = [];
    for (const name of ["store", "trace writer", "listener"]) {
      await parts.start(name, () => name.length, (n, how) => void log.push(`${name}:${n}:${how.aborted}`));
    }
    await parts.stopAll({ deadlineAt: 0, aborted: false });
    await parts.stopAll({ deadlineAt: 0, aborted: true });
    expect(log).toEqual(["listener:8:false", "trace writer:12:false", "store:5:false"]);
  });

  it("stop only what started when a start fails part-way", async () => {
    const parts = new Components();
    const log: string[] = [];
    await parts.start("store", () => "db", () => void log.push("store"));
    await expect(
      parts.start("listener", () => Promise.reject(new Error("port in use")), () => void log.push("listener")),
    ).rejects.toThrow("port in use");
    await parts.stopAll({ deadlineAt: 0, aborted: true });
    expect(log).toEqual(["store"]);
  });
});

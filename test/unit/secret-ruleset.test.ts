import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { rulesetSecrets } from "../../src/recall/safety/secret-ruleset.js";

describe("the secretlint ruleset", () => {
  it("attributes a finding to the statement that holds it", async () => {
    const key = ["ghp", "_", "A".repeat(36)].join("");
    expect(await rulesetSecrets(["The user likes tea.", `The token is ${key}.`])).toEqual([null, expect.any(String)]);
  });

  it("leaves no performance marks behind: a sidecar scans on every recall, for months", async () => {
    // secretlint 12 marks every rule of every lint in the process's performance timeline (upstream
    // fixed it in 13.x, which needs Node 22): thousands of entries a minute, and an O(n) scan per mark.
    const before = performance.getEntriesByType("mark").length;
    for (let i = 0; i < 5; i++) await rulesetSecrets(["The user likes tea.", "The user uses Helix."]);
    expect(performance.getEntriesByType("mark").length).toBe(before);
  });
});

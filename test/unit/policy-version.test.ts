import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";

/**
 * Every weight, cap and floor is recorded in traces only through the policy
 * version. This pins the policy data to its version: changing any number
 * fails here until the version is bumped and the new hash recorded with it.
 */
const PINNED: Record<string, string> = {
  "retrieval@2": "8236d8d1c3bafb17027872c718ed57dd07619f581f0505a77d184a951c7fc694",
};

describe("retrieval policy version", () => {
  it("matches the hash of the policy data it names", () => {
    const { version, ...data } = RETRIEVAL_POLICY;
    const hash = createHash("sha256").update(JSON.stringify(data)).digest("hex");
    expect(PINNED[version], `policy data changed: bump RETRIEVAL_POLICY.version and pin ${hash} for it`).toBe(hash);
  });

  it("is frozen, so nothing can change it at run time", () => {
    expect(Object.isFrozen(RETRIEVAL_POLICY)).toBe(true);
    expect(Object.isFrozen(RETRIEVAL_POLICY.profiles.task)).toBe(true);
  });
});

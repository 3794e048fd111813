import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";

/**
 * Every weight, cap and floor is recorded in traces only through the policy
 * version. This pins the policy data to its version: changing any number
 * fails here until the version is bumped and the new hash recorded with it.
 * The semantic arm's part (`semantic`) is versioned by `semanticTag`, which
 * every recall it took part in appends to the version: it is pinned apart,
 * so tuning the arm leaves the version of recalls without it as it was.
 * (Up to retrieval@5 the hash covered the whole object.)
 */
const PINNED: Record<string, string> = {
  "retrieval@2": "c8902b6d76e82a87de76f5dd99da9ae551da9b6270d25fe44daf07f4e7864e6e",
  "retrieval@3": "db5a6eac2c18759e9dcd13567872fb22a40e4cd28c74d58c46fe631b2460790c",
  "retrieval@4": "37f663ece2471eacb20805cd67e10299d551f0fa36981d6efd37c3610f50410d",
  "retrieval@5": "690391a3a92f8fbca91f3c6cdc21f12567eccd99ab5c6f7572c5084cf4a4c5f8",
  "retrieval@6": "7638a46d865ddfc39e3771f1edee8ce5287ca78d77eec617152cc27c8313563b",
};

/** The semantic arm's fusion data, by its tag (`+semantic@2` was rank fusion, weight 1, cap 200, outside the policy). */
const SEMANTIC_PINNED: Record<string, string> = {
  "+semantic@3": "58c95ddd5588480526a81f3404ccb83bf7c230ad770bdd90dd07e20739607808",
};

describe("retrieval policy version", () => {
  it("matches the hash of the policy data it names", () => {
    const { version, semanticTag, semantic, ...data } = RETRIEVAL_POLICY;
    const hash = createHash("sha256").update(JSON.stringify(data)).digest("hex");
    expect(PINNED[version], `policy data changed: bump RETRIEVAL_POLICY.version and pin ${hash} for it`).toBe(hash);
    const semanticHash = createHash("sha256").update(JSON.stringify(semantic)).digest("hex");
    expect(SEMANTIC_PINNED[semanticTag], `semantic fusion changed: bump RETRIEVAL_POLICY.semanticTag and pin ${semanticHash} for it`).toBe(semanticHash);
  });

  it("is frozen, so nothing can change it at run time", () => {
    expect(Object.isFrozen(RETRIEVAL_POLICY)).toBe(true);
    expect(Object.isFrozen(RETRIEVAL_POLICY.profiles.task)).toBe(true);
  });
});

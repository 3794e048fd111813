import { describe, expect, it } from "vitest";
import { collapse, type Collapsible } from "../../src/recall/rank/collapse.js";
import { perSubjectCap } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";

const T0 = new Date("2026-01-01T00:00:00Z");
const T1 = new Date("2026-02-01T00:00:00Z");
const T2 = new Date("2026-03-01T00:00:00Z");

/** A collapsible candidate; id doubles as a distinct statement unless one is given. */
function c(beliefId: string, overrides: Partial<Collapsible> = {}): Collapsible {
  return {
    beliefId,
    subject: "Andy",
    statement: `Statement ${beliefId}.`,
    beliefType: "preference",
    predicateKey: "",
    supersedes: [],
    conflictsWith: [],
    validFrom: T0,
    ...overrides,
  };
}

const ids = (items: readonly Collapsible[]) => items.map((b) => b.beliefId);
const CAP = 6;

describe("collapse", () => {
  it("derives the per-subject cap from the item cap and profile", () => {
    expect(perSubjectCap(12, "task", RETRIEVAL_POLICY)).toBe(9);
    expect(perSubjectCap(20, "deep", RETRIEVAL_POLICY)).toBe(10);
    expect(perSubjectCap(4, "task", RETRIEVAL_POLICY)).toBe(3);
    // The snapshot is mostly about the user: no per-subject cap below the item cap.
    expect(perSubjectCap(40, "core", RETRIEVAL_POLICY)).toBe(40);
  });

  it("returns nothing for nothing", () => {
    const out = collapse([], CAP);
    expect(out.kept).toEqual([]);
    expect(out.conflicts.size).toBe(0);
    expect(out.removed.size).toBe(0);
  });

  it("keeps input order, which is rank order", () => {
    const out = collapse([c("c"), c("a"), c("b", { subject: "Bob" })], CAP);
    expect(ids(out.kept)).toEqual(["c", "a", "b"]);
    expect(out.removed.size).toBe(0);
  });

  describe("supersession by the supersedes list", () => {
    it("drops the replaced belief when the replacement ranks higher", () => {
      const out = collapse([c("new", { supersedes: ["old"] }), c("old")], CAP);
      expect(ids(out.kept)).toEqual(["new"]);
      expect(out.removed.get("old")).toBe("superseded");
    });

    it("drops the replaced belief even when it ranks higher than its replacement", () => {
      const out = collapse([c("old"), c("new", { supersedes: ["old"] })], CAP);
      expect(ids(out.kept)).toEqual(["new"]);
      expect(out.removed.get("old")).toBe("superseded");
    });

    it("follows a chain: only the head survives", () => {
      const out = collapse([c("a"), c("b", { supersedes: ["a"] }), c("c", { supersedes: ["b"] })], CAP);
      expect(ids(out.kept)).toEqual(["c"]);
      expect([...out.removed.entries()].sort()).toEqual([
        ["a", "superseded"],
        ["b", "superseded"],
      ]);
    });

    it("ignores supersedes ids that are not among the candidates", () => {
      const out = collapse([c("new", { supersedes: ["absent"] }), c("other")], CAP);
      expect(ids(out.kept)).toEqual(["new", "other"]);
    });
  });

  describe("supersession by (subject, belief_type, predicate_key)", () => {
    it("keeps only the latest valid_from, whatever the rank", () => {
      const out = collapse(
        [
          c("older", { predicateKey: "home_city", validFrom: T0, statement: "Andy lives in Paris." }),
          c("newest", { predicateKey: "home_city", validFrom: T2, statement: "Andy lives in Berlin." }),
          c("middle", { predicateKey: "home_city", validFrom: T1, statement: "Andy lives in Rome." }),
        ],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["newest"]);
      expect(out.removed.get("older")).toBe("superseded");
      expect(out.removed.get("middle")).toBe("superseded");
    });

    it("matches subjects case-insensitively", () => {
      const out = collapse(
        [
          c("a", { subject: "andy", predicateKey: "home_city", validFrom: T0 }),
          c("b", { subject: "ANDY", predicateKey: "home_city", validFrom: T1 }),
        ],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["b"]);
    });

    it("does not group across belief types, predicate keys or subjects", () => {
      const out = collapse(
        [
          c("a", { predicateKey: "home_city", validFrom: T0 }),
          c("b", { predicateKey: "home_city", beliefType: "user_model_attr", validFrom: T1 }),
          c("c", { predicateKey: "work_city", validFrom: T1 }),
          c("d", { predicateKey: "home_city", subject: "Bob", validFrom: T1 }),
        ],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["a", "b", "c", "d"]);
    });

    it("never groups beliefs without a predicate key", () => {
      const out = collapse([c("a", { validFrom: T0 }), c("b", { validFrom: T2 })], CAP);
      expect(ids(out.kept)).toEqual(["a", "b"]);
    });

    it("keeps the higher-ranked one on an exact valid_from tie", () => {
      const out = collapse(
        [c("second", { predicateKey: "k", validFrom: T1 }), c("first", { predicateKey: "k", validFrom: T1 })],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["second"]);
      expect(out.removed.get("first")).toBe("superseded");
    });
  });

  describe("conflicts", () => {
    it("reads conflicts_with in both directions and marks both partners", () => {
      const out = collapse([c("a", { conflictsWith: ["b"] }), c("b")], CAP);
      expect(ids(out.kept)).toEqual(["a", "b"]);
      expect(out.conflicts.get("a")).toEqual(["b"]);
      expect(out.conflicts.get("b")).toEqual(["a"]);
    });

    it("marks the partner when only the lower-ranked belief names the link", () => {
      const out = collapse([c("a"), c("b", { conflictsWith: ["a"] })], CAP);
      expect(out.conflicts.get("a")).toEqual(["b"]);
      expect(out.conflicts.get("b")).toEqual(["a"]);
    });

    it("sorts the markers", () => {
      const out = collapse([c("m", { conflictsWith: ["z", "b"] }), c("z"), c("b", { conflictsWith: ["m"] })], CAP);
      expect(out.conflicts.get("m")).toEqual(["b", "z"]);
      expect(out.conflicts.get("z")).toEqual(["m"]);
      expect(out.conflicts.get("b")).toEqual(["m"]);
    });

    it("ignores partners that are not candidates, and self-references", () => {
      const out = collapse([c("a", { conflictsWith: ["absent", "a"] })], CAP);
      expect(ids(out.kept)).toEqual(["a"]);
      expect(out.conflicts.size).toBe(0);
    });

    it("drops the marker when the partner itself was removed", () => {
      const out = collapse([c("a", { conflictsWith: ["b"] }), c("b"), c("b2", { supersedes: ["b"] })], CAP);
      expect(ids(out.kept)).toEqual(["a", "b2"]);
      expect(out.conflicts.size).toBe(0);
    });

    // Regression, fixed (src/recall/rank/collapse.ts:47-62): two beliefs linked by conflicts_with (no supersedes
    // link) that share (subject, belief_type, predicate_key) are silently resolved by the
    // predicate-key collapse: the older valid_from is removed as "superseded" and the survivor
    // carries no conflicts marker. The spec (step 6) says partners linked by conflicts_with with
    // no supersession must both be returned with a marker - retrieval must not resolve them at
    // read time. Conflicting beliefs about one slot naturally share a predicate key.
    it("keeps both conflict partners that share a predicate key, with markers", () => {
      const out = collapse(
        [
          c("berlin", { predicateKey: "home_city", validFrom: T1, statement: "Andy lives in Berlin.", conflictsWith: ["paris"] }),
          c("paris", { predicateKey: "home_city", validFrom: T0, statement: "Andy lives in Paris." }),
        ],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["berlin", "paris"]);
      expect(out.conflicts.get("berlin")).toEqual(["paris"]);
      expect(out.conflicts.get("paris")).toEqual(["berlin"]);
    });
  });

  describe("per-subject cap", () => {
    it("keeps at most n beliefs per subject, the highest-ranked first", () => {
      const out = collapse([c("a"), c("b"), c("c"), c("d", { subject: "Bob" })], 2);
      expect(ids(out.kept)).toEqual(["a", "b", "d"]);
      expect(out.removed.get("c")).toBe("subject_cap");
    });

    it("counts subjects case-insensitively", () => {
      const out = collapse([c("a", { subject: "Andy" }), c("b", { subject: "andy" })], 1);
      expect(ids(out.kept)).toEqual(["a"]);
      expect(out.removed.get("b")).toBe("subject_cap");
    });

    it("exempts a conflict partner that names the link", () => {
      const out = collapse([c("x"), c("y"), c("a", { conflictsWith: ["b"] }), c("b")], 1);
      expect(ids(out.kept)).toEqual(["x", "a", "b"]);
      expect(out.removed.get("y")).toBe("subject_cap");
      expect(out.conflicts.get("a")).toEqual(["b"]);
      expect(out.conflicts.get("b")).toEqual(["a"]);
    });

    it("exempts a conflict partner named only by the other side (both directions)", () => {
      const out = collapse([c("x"), c("a"), c("b", { conflictsWith: ["a"] })], 1);
      expect(ids(out.kept)).toEqual(["x", "a", "b"]);
      expect(out.conflicts.get("a")).toEqual(["b"]);
    });

    it("still caps a non-partner ranked after exempt partners", () => {
      const out = collapse([c("a", { conflictsWith: ["b"] }), c("b"), c("z")], 2);
      expect(ids(out.kept)).toEqual(["a", "b"]);
      expect(out.removed.get("z")).toBe("subject_cap");
    });

    it("does not count removed beliefs against the cap", () => {
      const out = collapse([c("old"), c("new", { supersedes: ["old"] }), c("other")], 2);
      expect(ids(out.kept)).toEqual(["new", "other"]);
    });
  });

  describe("exact restatement trim", () => {
    it("keeps the higher-ranked copy", () => {
      const out = collapse(
        [c("high", { statement: "Andy prefers tea." }), c("low", { statement: "Andy prefers tea." })],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["high"]);
      expect(out.removed.get("low")).toBe("restatement");
    });

    it("treats case and whitespace differences as the same statement", () => {
      const out = collapse(
        [c("high", { statement: "Andy prefers tea." }), c("low", { statement: "  andy   PREFERS\ttea. " })],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["high"]);
      expect(out.removed.get("low")).toBe("restatement");
    });

    it("keeps statements that differ in wording", () => {
      const out = collapse(
        [c("a", { statement: "Andy prefers tea." }), c("b", { statement: "Andy prefers green tea." })],
        CAP,
      );
      expect(ids(out.kept)).toEqual(["a", "b"]);
    });

    it("does not count a trimmed restatement against the subject cap", () => {
      const out = collapse(
        [c("a", { statement: "Same." }), c("b", { statement: "Same." }), c("c", { statement: "Other." })],
        2,
      );
      expect(ids(out.kept)).toEqual(["a", "c"]);
    });
  });

  it("removes each belief for exactly one reason and keeps the rest", () => {
    const ranked = [
      c("a", { conflictsWith: ["b"] }),
      c("b"),
      c("dup", { statement: "Statement a." }),
      c("old"),
      c("new", { supersedes: ["old"] }),
      c("capped"),
    ];
    const out = collapse(ranked, 3);
    expect(ids(out.kept)).toEqual(["a", "b", "new"]);
    expect(Object.fromEntries(out.removed)).toEqual({
      dup: "restatement",
      old: "superseded",
      capped: "subject_cap",
    });
    expect(out.kept.length + out.removed.size).toBe(ranked.length);
  });
});

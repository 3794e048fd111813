import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { byScoreThenId } from "../../src/recall/render/assemble.js";
import { collapse } from "../../src/recall/rank/collapse.js";
import {
  authority,
  conf,
  confidenceBand,
  contentWords,
  coveredSources,
  demoteCoveredSources,
  demoteNearDuplicates,
  isCarried,
  jaccard,
  nearDuplicates,
  penalty,
  reinforce,
  scopeAffinity,
  score,
  type NearDuplicateCandidate,
  type SourceCandidate,
} from "../../src/recall/rank/rank.js";
import { DAY_MS, pick, prng, shuffle, storedBelief, uid } from "./unit-helpers.js";

const AT = new Date("2026-07-24T09:00:00Z");
const daysBefore = (days: number) => new Date(AT.getTime() - days * DAY_MS);

describe("conf", () => {
  it("is confidence x 1.0 for active beliefs", () => {
    expect(conf(storedBelief({ status: "active", confidence: 0.9 }))).toBe(0.9);
  });

  it("is confidence x 0.4 for provisional beliefs", () => {
    expect(conf(storedBelief({ status: "provisional", confidence: 0.9 }))).toBeCloseTo(0.36, 12);
    expect(conf(storedBelief({ status: "provisional", confidence: 1 }))).toBe(0.4);
  });

  it("is 0 for superseded and expired beliefs", () => {
    expect(conf(storedBelief({ status: "superseded", confidence: 1 }))).toBe(0);
    expect(conf(storedBelief({ status: "expired", confidence: 1 }))).toBe(0);
  });
});

describe("reinforce", () => {
  const fresh = { lastEvidenceAt: AT };

  it("is log1p(n) / log1p(10) for fresh evidence", () => {
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 1 }), AT, P)).toBeCloseTo(Math.log(2) / Math.log(11), 12);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 4 }), AT, P)).toBeCloseTo(Math.log(5) / Math.log(11), 12);
  });

  it("saturates at C_max = 10", () => {
    expect(P.reinforceSaturation).toBe(10);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 10 }), AT, P)).toBe(1);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 500 }), AT, P)).toBe(1);
  });

  it("is 0 without evidence", () => {
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 0 }), AT, P)).toBe(0);
  });

  it("decays as exp(-Δt/τ) with τ from the belief type", () => {
    const pref = storedBelief({ beliefType: "preference", evidenceCount: 10, lastEvidenceAt: daysBefore(365) });
    expect(reinforce(pref, AT, P)).toBeCloseTo(Math.exp(-1), 12);
    const status = storedBelief({ beliefType: "status", evidenceCount: 10, lastEvidenceAt: daysBefore(7) });
    expect(reinforce(status, AT, P)).toBeCloseTo(Math.exp(-1), 12);
    const decision = storedBelief({ beliefType: "decision", evidenceCount: 10, lastEvidenceAt: daysBefore(60) });
    expect(reinforce(decision, AT, P)).toBeCloseTo(Math.exp(-0.5), 12);
  });

  it("combines corroboration and decay multiplicatively", () => {
    const b = storedBelief({ beliefType: "project_fact", evidenceCount: 2, lastEvidenceAt: daysBefore(30) });
    expect(reinforce(b, AT, P)).toBeCloseTo((Math.log(3) / Math.log(11)) * Math.exp(-30 / 60), 12);
  });

  it("uses the default τ of 90 days for unknown types", () => {
    expect(P.defaultDecayDays).toBe(90);
    const b = storedBelief({ beliefType: "something_new", evidenceCount: 10, lastEvidenceAt: daysBefore(90) });
    expect(reinforce(b, AT, P)).toBeCloseTo(Math.exp(-1), 12);
  });

  it("decays situational facts faster than stable preferences", () => {
    const at30 = (beliefType: string) =>
      reinforce(storedBelief({ beliefType, evidenceCount: 10, lastEvidenceAt: daysBefore(30) }), AT, P);
    const order = ["preference", "decision", "project_fact", "event", "status"].map(at30);
    for (let i = 1; i < order.length; i++) expect(order[i]!).toBeLessThan(order[i - 1]!);
  });

  it("does not grow past the corroboration for evidence dated after the reference time", () => {
    const b = storedBelief({ evidenceCount: 10, lastEvidenceAt: new Date(AT.getTime() + 5 * DAY_MS) });
    expect(reinforce(b, AT, P)).toBe(1);
  });
});

describe("authority", () => {
  it("orders user > affirmed > inferred with the policy's values", () => {
    expect(authority(storedBelief({ authority: "user" }), P)).toBe(1);
    expect(authority(storedBelief({ authority: "affirmed" }), P)).toBe(0.8);
    expect(authority(storedBelief({ authority: "inferred" }), P)).toBe(0.5);
  });
});

describe("isCarried and scopeAffinity", () => {
  it("scores a belief learned in the current project at 1 and does not carry it", () => {
    const b = storedBelief({ scopeLevel: "project", originScope: "veetbot", portability: "local" });
    expect(isCarried(b, "veetbot")).toBe(false);
    expect(scopeAffinity(b, "veetbot", P)).toBe(1);
  });

  it("scores user and global beliefs at parity with the current project, wherever they came from", () => {
    for (const scopeLevel of ["user", "global"] as const) {
      for (const portability of ["portable", "contextual", "local"] as const) {
        const b = storedBelief({ scopeLevel, originScope: "atlas", portability });
        expect(isCarried(b, "veetbot")).toBe(false);
        expect(scopeAffinity(b, "veetbot", P)).toBe(1);
      }
    }
  });

  it("discounts a carried belief by portability: portable > contextual > local", () => {
    const carried = (portability: "portable" | "contextual" | "local") =>
      storedBelief({ scopeLevel: "project", originScope: "atlas", portability });
    expect(isCarried(carried("portable"), "veetbot")).toBe(true);
    expect(scopeAffinity(carried("portable"), "veetbot", P)).toBe(0.85);
    expect(scopeAffinity(carried("contextual"), "veetbot", P)).toBe(0.5);
    expect(scopeAffinity(carried("local"), "veetbot", P)).toBe(0.15);
  });

  it("treats origin scope as case-sensitive text", () => {
    expect(isCarried(storedBelief({ scopeLevel: "project", originScope: "Veetbot" }), "veetbot")).toBe(true);
  });
});

describe("penalty", () => {
  it("is 0 for a clean belief", () => {
    expect(penalty(storedBelief(), AT, P)).toBe(0);
  });

  it("is 0.5 for a belief flagged for review", () => {
    expect(penalty(storedBelief({ flaggedForReview: true }), AT, P)).toBe(0.5);
  });

  it("is 0.3 once past expires_hint, including at the exact instant", () => {
    expect(penalty(storedBelief({ expiresHint: daysBefore(1) }), AT, P)).toBe(0.3);
    expect(penalty(storedBelief({ expiresHint: AT }), AT, P)).toBe(0.3);
  });

  it("is 0 before expires_hint", () => {
    expect(penalty(storedBelief({ expiresHint: new Date(AT.getTime() + 1) }), AT, P)).toBe(0);
  });

  it("adds both penalties", () => {
    expect(penalty(storedBelief({ flaggedForReview: true, expiresHint: daysBefore(1) }), AT, P)).toBe(0.8);
  });
});

describe("score", () => {
  const strong = () =>
    storedBelief({
      status: "active",
      confidence: 0.9,
      authority: "user",
      evidenceCount: 10,
      lastEvidenceAt: AT,
      scopeLevel: "project",
      originScope: "veetbot",
      utility: 0.5,
    });
  const ctx = (weights: typeof P.profiles.task) => ({ currentScope: "veetbot", at: AT, weights });

  it("applies the task weights: 0.45 match + 0.15 conf + 0.05 reinforce + 0.1 authority + 0.2 scope + 0.05 utility", () => {
    // 0.45*0.8 + 0.15*0.9 + 0.05*1 + 0.1*1 + 0.2*1 + 0.05*0.5 = 0.87
    expect(score(strong(), 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.87, 9);
  });

  it("applies the core weights, where match has no weight", () => {
    // 0.3*0.9 + 0.15*1 + 0.3*1 + 0.15*1 + 0.1*0.5 = 0.92
    expect(score(strong(), 0, ctx(P.profiles.core), P)).toBeCloseTo(0.92, 9);
    expect(score(strong(), 1, ctx(P.profiles.core), P)).toBe(score(strong(), 0, ctx(P.profiles.core), P));
  });

  it("applies the deep weights", () => {
    // 0.5*1 + 0.15*0.9 + 0.05*1 + 0.1*1 + 0.15*1 + 0.05*0.5 = 0.96
    expect(score(strong(), 1, ctx(P.profiles.deep), P)).toBeCloseTo(0.96, 9);
  });

  it("subtracts the weighted penalty", () => {
    const flagged = { ...strong(), flaggedForReview: true };
    // 0.87 - 0.3 * 0.5
    expect(score(flagged, 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.72, 9);
    const expired = { ...strong(), expiresHint: daysBefore(1) };
    // 0.87 - 0.3 * 0.3
    expect(score(expired, 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.78, 9);
  });

  it("discounts a carried belief by w_scope x (1 - carried affinity)", () => {
    const local = score(strong(), 0.8, ctx(P.profiles.task), P);
    const carried = score({ ...strong(), originScope: "atlas", portability: "contextual" }, 0.8, ctx(P.profiles.task), P);
    expect(local - carried).toBeCloseTo(0.2 * 0.5, 9);
  });

  it("ranks provisional below an otherwise identical active belief", () => {
    const active = score(strong(), 0.8, ctx(P.profiles.task), P);
    const provisional = score({ ...strong(), status: "provisional" }, 0.8, ctx(P.profiles.task), P);
    expect(active - provisional).toBeCloseTo(0.15 * 0.9 * 0.6, 9);
  });

  it("ranks by authority: user > affirmed > inferred", () => {
    const s = (a: "user" | "affirmed" | "inferred") => score({ ...strong(), authority: a }, 0.5, ctx(P.profiles.core), P);
    expect(s("user")).toBeGreaterThan(s("affirmed"));
    expect(s("affirmed")).toBeGreaterThan(s("inferred"));
    expect(s("user") - s("inferred")).toBeCloseTo(0.3 * 0.5, 9);
  });

  it("is rounded to 1e-9 so float noise never reorders equal beliefs", () => {
    const value = score({ ...strong(), confidence: 0.1 + 0.2 }, 1 / 3, ctx(P.profiles.task), P);
    expect(Math.round(value * 1e9) / 1e9).toBe(value);
  });

  it("is pinned to the reference time, not the wall clock", () => {
    const b = { ...strong(), lastEvidenceAt: daysBefore(100) };
    const first = score(b, 0.5, ctx(P.profiles.task), P);
    const second = score(b, 0.5, ctx(P.profiles.task), P);
    expect(second).toBe(first);
    const later = score(b, 0.5, { ...ctx(P.profiles.task), at: new Date(AT.getTime() + 100 * DAY_MS) }, P);
    expect(later).toBeLessThan(first);
  });
});

describe("confidenceBand", () => {
  const band = (confidence: number, carried = false, status: "active" | "provisional" = "active") =>
    confidenceBand(storedBelief({ confidence, status }), carried, P);

  it("bands at the policy thresholds: high >= 0.8, medium >= 0.5, else low", () => {
    expect(P.bands).toEqual({ high: 0.8, medium: 0.5 });
    expect(band(1)).toBe("high");
    expect(band(0.8)).toBe("high");
    expect(band(0.79)).toBe("medium");
    expect(band(0.5)).toBe("medium");
    expect(band(0.49)).toBe("low");
    expect(band(0)).toBe("low");
  });

  it("shows a carried belief one band lower, never below low", () => {
    expect(band(0.95, true)).toBe("medium");
    expect(band(0.6, true)).toBe("low");
    expect(band(0.2, true)).toBe("low");
  });

  it("bands on lifecycle-weighted confidence, so provisional beliefs read lower", () => {
    // 0.9 x 0.4 = 0.36
    expect(band(0.9, false, "provisional")).toBe("low");
    expect(band(1, false, "provisional")).toBe("low");
  });
});

describe("near-duplicate penalty", () => {
  const TASK = P.profiles.task;
  /** A ranked candidate; ids are numbered so the total order is easy to read. */
  const cand = (n: number, statement: string, score: number, overrides: Partial<NearDuplicateCandidate> = {}): NearDuplicateCandidate => ({
    beliefId: uid(n),
    subject: "Andy",
    statement,
    beliefType: "preference",
    predicateKey: "",
    supersedes: [],
    conflictsWith: [],
    score,
    ...overrides,
  });
  const order = (items: readonly NearDuplicateCandidate[]) => items.map((i) => i.beliefId);

  const writing = cand(1, "Andy prefers concise, prose-first writing.", 0.8);
  const writingAgain = cand(2, "Andy prefers concise prose-first writing in reviews.", 0.78);
  const berlin = cand(3, "Andy works from Berlin and keeps European hours.", 0.72);

  it("measures content words without function words or the subject's own words", () => {
    expect([...contentWords("Andy prefers concise, prose-first writing.", "Andy")]).toEqual(["prefers", "concise", "prose", "first", "writing"]);
    expect([...contentWords("Acme Corp deploys to the Acme cluster.", "Acme Corp")]).toEqual(["deploys", "cluster"]);
    expect([...contentWords("Andy doesn't drink coffee.", "Andy")]).toEqual(["not", "drink", "coffee"]);
  });

  it("jaccard is |a ∩ b| / |a ∪ b|, and 0 for two empty sets", () => {
    expect(jaccard(new Set(["a", "b", "c"]), new Set(["b", "c", "d"]))).toBe(0.5);
    expect(jaccard(new Set(["a"]), new Set(["a"]))).toBe(1);
    expect(jaccard(new Set(), new Set())).toBe(0);
    expect(jaccard(new Set(["a"]), new Set())).toBe(0);
  });

  it("keeps its measure and threshold in the policy", () => {
    expect(P.nearDuplicate).toEqual({ measure: "jaccard-content-words", threshold: 0.6 });
    expect(P.penalty.nearDuplicate).toBe(0.5);
  });

  it("drops a near duplicate below a distinct second fact about the same subject", () => {
    // Before: writing, writingAgain, berlin. writingAgain loses 0.3 x 0.5 = 0.15 -> 0.63 < 0.72.
    const out = demoteNearDuplicates([writing, writingAgain, berlin], TASK, P);
    expect(order(out)).toEqual([writing.beliefId, berlin.beliefId, writingAgain.beliefId]);
    expect(out[2]!.score).toBeCloseTo(0.63, 9);
    expect(nearDuplicates([writing, writingAgain, berlin], P)).toEqual(new Map([[writingAgain.beliefId, writing.beliefId]]));
  });

  it("demotes, never deletes: the near duplicate is still a candidate after collapse", () => {
    const demoted = demoteNearDuplicates([writing, writingAgain, berlin], TASK, P);
    expect(demoted).toHaveLength(3);
    const collapsed = collapse(
      demoted.map((c) => ({ ...c, validFrom: AT })),
      10,
    );
    expect(collapsed.kept.map((c) => c.beliefId)).toEqual(order(demoted));
    expect(collapsed.removed.size).toBe(0);
  });

  it("still lets collapse trim an exact restatement, keeping the higher-scored copy", () => {
    const copy = cand(4, "  andy prefers CONCISE, prose-first   writing. ", 0.79);
    const demoted = demoteNearDuplicates([writing, copy, writingAgain, berlin], TASK, P);
    const collapsed = collapse(
      demoted.map((c) => ({ ...c, validFrom: AT })),
      10,
    );
    expect(collapsed.removed.get(copy.beliefId)).toBe("restatement");
    expect(collapsed.kept.map((c) => c.beliefId)).toEqual([writing.beliefId, berlin.beliefId, writingAgain.beliefId]);
  });

  it("penalises with the profile's w_penalty, once however many items it resembles", () => {
    const third = cand(4, "Andy prefers concise prose-first writing.", 0.7);
    const core = demoteNearDuplicates([writing, writingAgain, third], P.profiles.core, P);
    // Core: 0.4 x 0.5 = 0.2 each, even though `third` resembles both items above it.
    expect(core.map((c) => [c.beliefId, c.score])).toEqual([
      [writing.beliefId, 0.8],
      [writingAgain.beliefId, 0.58],
      [third.beliefId, 0.5],
    ]);
  });

  it("leaves the highest-ranked copy alone and compares only within a subject", () => {
    const otherSubject = cand(5, "Priya prefers concise, prose-first writing.", 0.75, { subject: "Priya" });
    const out = demoteNearDuplicates([writing, otherSubject], TASK, P);
    expect(out.map((c) => c.score)).toEqual([0.8, 0.75]);
  });

  it("leaves merely related statements below the threshold alone", () => {
    // {prefers, tea} vs {prefers, coffee}: 1/3.
    const tea = cand(6, "Andy prefers tea.", 0.8);
    const coffee = cand(7, "Andy prefers coffee.", 0.7);
    expect(nearDuplicates([tea, coffee], P).size).toBe(0);
  });

  it("exempts conflict partners, superseded pairs and revisions of one predicate key", () => {
    const a = cand(8, "Andy deploys veetbot to Fly.io on Fridays.", 0.8);
    const partner = cand(9, "Andy deploys veetbot to Fly.io on Fridays at noon.", 0.7, { conflictsWith: [a.beliefId] });
    const successor = cand(10, "Andy deploys veetbot to Fly.io on Fridays only.", 0.6, { supersedes: [a.beliefId] });
    const revision = cand(11, "Andy deploys veetbot to Fly.io on Fridays, usually.", 0.5, { predicateKey: "deploy_day" });
    const older = cand(12, "Andy deploys veetbot to Fly.io on Fridays, mostly.", 0.9, { predicateKey: "deploy_day" });
    // Control: without the relation, each pair is a near duplicate.
    const unlinked = (c: NearDuplicateCandidate) => ({ ...c, conflictsWith: [], supersedes: [], predicateKey: "" });
    expect(nearDuplicates([a, unlinked(partner)], P)).toEqual(new Map([[partner.beliefId, a.beliefId]]));
    expect(nearDuplicates([a, unlinked(successor)], P)).toEqual(new Map([[successor.beliefId, a.beliefId]]));
    expect(nearDuplicates([older, unlinked(revision)], P)).toEqual(new Map([[revision.beliefId, older.beliefId]]));
    expect(nearDuplicates([a, partner], P).size).toBe(0);
    expect(nearDuplicates([a, successor], P).size).toBe(0);
    expect(nearDuplicates([older, revision], P).size).toBe(0);
  });

  it("finds exactly the pairs an all-pairs comparison finds (prefix filtering and per-subject groups lose none)", () => {
    const rand = prng(7);
    const vocabulary = ["prefers", "concise", "writing", "berlin", "works", "helix", "editor", "coffee", "black", "tea", "not", "daily"];
    const bruteForce = (items: NearDuplicateCandidate[]) => {
      const out = new Map<string, string>();
      items.forEach((b, i) => {
        const original = items
          .slice(0, i)
          .find(
            (a) =>
              a.subject.toLowerCase() === b.subject.toLowerCase() &&
              jaccard(contentWords(a.statement, a.subject), contentWords(b.statement, b.subject)) >= P.nearDuplicate.threshold,
          );
        if (original) out.set(b.beliefId, original.beliefId);
      });
      return out;
    };
    let found = 0;
    // Up to 80 items over two or three subjects: groups small enough to be compared pair by pair and
    // large enough to be compared by prefixes. Then up to 200 items with longer statements from a larger
    // vocabulary, as a recall about one subject has: long prefixes, many words in one set only.
    const larger = [...vocabulary, ...Array.from({ length: 40 }, (_, i) => `word${i}`)];
    for (const [runs, maxItems, maxWords, words] of [[200, 80, 6, vocabulary], [60, 200, 14, larger]] as const) {
      for (let run = 0; run < runs; run++) {
        const items = Array.from({ length: 2 + Math.floor(rand() * maxItems) }, (_, i) => {
          const said = Array.from({ length: 1 + Math.floor(rand() * maxWords) }, () => pick(rand, words));
          return cand(i, `Andy ${said.join(" ")}.`, 1 - i / 1000, { subject: pick(rand, ["Andy", "andy", "Priya"]) });
        });
        const expected = bruteForce(items);
        found += expected.size;
        expect(nearDuplicates(items, P)).toEqual(expected);
      }
    }
    expect(found).toBeGreaterThan(500);
  });

  it("is deterministic: the same first ranking gives the same order and scores, whatever order it was built in", () => {
    const rand = prng(20260724);
    const statements = [
      "Andy prefers concise, prose-first writing.",
      "Andy prefers concise prose-first writing in reviews.",
      "Andy works from Berlin.",
      "Andy works from Berlin, Germany.",
      "Andy's editor is Helix.",
    ];
    for (let run = 0; run < 50; run++) {
      const set = Array.from({ length: 1 + Math.floor(rand() * 12) }, (_, i) =>
        cand(i, pick(rand, statements), Math.round(rand() * 10) / 10, { subject: pick(rand, ["Andy", "andy", "Priya"]) }),
      );
      const first = [...set].sort(byScoreThenId);
      const again = shuffle(rand, set).sort(byScoreThenId);
      const out = demoteNearDuplicates(first, TASK, P);
      expect(demoteNearDuplicates(again, TASK, P)).toEqual(out);
      // The result is in the total order, and nothing is lost.
      expect(out).toEqual([...out].sort(byScoreThenId));
      expect(order(out).sort()).toEqual(order(set).sort());
    }
  });
});

describe("source-coverage penalty", () => {
  const TASK = P.profiles.task;
  const cand = (n: number, score: number, sources: string[], overrides: Partial<SourceCandidate> = {}): SourceCandidate => ({
    beliefId: uid(n),
    subject: "Caroline",
    statement: `Statement number ${n}.`,
    beliefType: "observation",
    predicateKey: "",
    supersedes: [],
    conflictsWith: [],
    score,
    sourceEpisodeIds: sources,
    ...overrides,
  });
  const ids = (items: readonly SourceCandidate[]) => items.map((i) => i.beliefId);

  it("keeps its weight in the policy", () => {
    expect(P.penalty.sourceCovered).toBe(0.5);
  });

  it("finds a candidate whose every source a higher-ranked candidate cites", () => {
    // Two observations of one dialog turn (e1): the second adds no evidence.
    const a = cand(1, 0.9, ["e1"]);
    const b = cand(2, 0.88, ["e2"]);
    const c = cand(3, 0.87, ["e1"]);
    expect(coveredSources([a, b, c])).toEqual(new Set([c.beliefId]));
  });

  it("counts sources cited by several higher-ranked candidates together", () => {
    const a = cand(1, 0.9, ["e1"]);
    const b = cand(2, 0.88, ["e2"]);
    const both = cand(3, 0.87, ["e2", "e1"]);
    const partly = cand(4, 0.86, ["e1", "e3"]);
    expect(coveredSources([a, b, both, partly])).toEqual(new Set([both.beliefId]));
  });

  it("never covers a belief that cites no episode, nor the highest-ranked citer", () => {
    expect(coveredSources([cand(1, 0.9, []), cand(2, 0.8, [])]).size).toBe(0);
    expect(coveredSources([cand(1, 0.9, ["e1"])]).size).toBe(0);
  });

  it("exempts what collapse relates: conflict partners, supersession, one predicate key", () => {
    const a = cand(1, 0.9, ["e1"]);
    const partner = cand(2, 0.8, ["e1"], { conflictsWith: [a.beliefId] });
    const successor = cand(3, 0.7, ["e1"], { supersedes: [a.beliefId] });
    const key = cand(4, 0.85, ["e2"], { predicateKey: "coffee", beliefType: "preference" });
    const revision = cand(5, 0.6, ["e2"], { predicateKey: "coffee", beliefType: "preference" });
    // partner and successor are covered by each other (neither relates to the other), never by a.
    expect(coveredSources([a, partner, successor])).toEqual(new Set([successor.beliefId]));
    expect(coveredSources([key, revision]).size).toBe(0);
  });

  it("demotes by w_penalty x penalty.sourceCovered and re-sorts in the total order", () => {
    const a = cand(1, 0.9, ["e1"]);
    const b = cand(2, 0.88, ["e1"]);
    const c = cand(3, 0.8, ["e2"]);
    const out = demoteCoveredSources([a, b, c], TASK, P);
    // b loses 0.3 x 0.5 = 0.15: 0.73, below c.
    expect(ids(out)).toEqual([a.beliefId, c.beliefId, b.beliefId]);
    expect(out[2]!.score).toBeCloseTo(0.73, 9);
    expect(out).toHaveLength(3);
  });

  it("leaves a ranking without shared sources as it was", () => {
    const list = [cand(1, 0.9, ["e1"]), cand(2, 0.8, ["e2"])];
    expect(demoteCoveredSources(list, TASK, P)).toEqual(list);
  });
});

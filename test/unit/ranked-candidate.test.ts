import { describe, expect, it } from "vitest";
import { collapse } from "../../src/recall/rank/collapse.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { contentWords, nearDuplicates } from "../../src/recall/rank/rank.js";
import { RowMemo } from "../../src/ports/row-memo.js";
import { scanStatements } from "../../src/recall/safety/safety.js";
import { rankedCandidate } from "../../src/recall/rank/ranked-candidate.js";
import { beliefLine } from "../../src/recall/render/belief-line.js";
import { LineCandidate } from "../../src/recall/render/line-candidate.js";
import { renderLine, type RenderLine } from "../../src/recall/render/render.js";
import { storedBelief } from "./unit-helpers.js";

/** The reply path's cheaper forms must give exactly what the plain ones gave. */
describe("the reply path's cheap forms", () => {
  it("a ranked candidate is the belief with its ranking, every field kept", () => {
    const b = storedBelief({
      conflictsWith: ["c0ffee00-0000-4000-8000-000000000001"],
      supersedes: ["c0ffee00-0000-4000-8000-000000000002"],
      expiresHint: new Date("2027-01-01T00:00:00Z"),
      lastUsedAt: new Date("2026-05-01T00:00:00Z"),
      utility: 0.25,
      storePosition: 42,
    });
    const c = rankedCandidate(b, ["lexical", "structured"], true, 1.25);
    expect(c).toEqual({ ...b, arms: ["lexical", "structured"], carried: true, score: 1.25 });
    expect(Object.keys(c).sort()).toEqual([...Object.keys(b), "arms", "carried", "score", "memo"].sort());
    // The row's memo (ports/row-memo.ts), when its source keeps one, is the source's own object.
    const memo = new RowMemo();
    expect(rankedCandidate(b, [], false, 0, memo).memo).toBe(memo);
  });

  it("a line candidate renders its line the first time it is read, and only then", () => {
    const b = rankedCandidate(storedBelief({ statement: "Andy prefers concise writing." }), ["lexical"], false, 0.5);
    const plain = beliefLine(b, false, [], RETRIEVAL_POLICY, { ok: true });
    let reads = 0;
    // Counts reads of the line's fields: rendering reads them, nothing else here does.
    const counted = new Proxy(plain, { get: (target, key) => ((reads += 1), Reflect.get(target, key)) }) as RenderLine;
    const c = new LineCandidate(b, [], counted);
    expect(reads).toBe(0);
    expect([c.beliefId, c.beliefType, c.score, c.belief]).toEqual([b.beliefId, b.beliefType, 0.5, b]);
    expect(c.renderLine).toBe(counted);
    expect(c.line).toBe(renderLine(plain));
    const afterFirst = reads;
    expect(afterFirst).toBeGreaterThan(0);
    expect(c.line).toBe(renderLine(plain));
    expect(reads).toBe(afterFirst);
  });

  it("a row's memo gives what the shared tables give, is filled, and is what later recalls read", async () => {
    const statements = ["Andy prefers concise writing.", "  Andy prefers  concise writing. ", "Andy prefers short, concise writing.", "Andy drives a red bike."];
    const beliefs = statements.map((statement, i) =>
      storedBelief({ beliefId: `c0ffee00-0000-4000-8000-00000000000${i}`, subject: i === 3 ? "ANDY" : "Andy", statement }),
    );
    const plain = beliefs.map((b, i) => rankedCandidate(b, ["lexical"], false, 1 - i / 10));
    const memos = beliefs.map(() => new RowMemo());
    const kept = () => beliefs.map((b, i) => rankedCandidate(b, ["lexical"], false, 1 - i / 10, memos[i]));
    expect(nearDuplicates(kept(), RETRIEVAL_POLICY)).toEqual(nearDuplicates(plain, RETRIEVAL_POLICY));
    const outcome = (c: ReturnType<typeof collapse>) => ({ kept: c.kept.map((k) => k.beliefId), conflicts: c.conflicts, removed: c.removed });
    expect(outcome(collapse(kept(), 10))).toEqual(outcome(collapse(plain, 10)));
    expect(await scanStatements(kept())).toEqual(await scanStatements(plain));
    memos.forEach((m, i) => {
      // Equal to the shared table's answer, but not kept there too: the table's set is one of its own.
      expect(m.contentWords).toEqual(contentWords(statements[i]!, beliefs[i]!.subject));
      expect(m.contentWords).not.toBe(contentWords(statements[i]!, beliefs[i]!.subject));
      expect(m.normalisedStatement).toBe(statements[i]!.trim().replace(/\s+/g, " ").toLowerCase());
      expect(m.lowerSubject).toBe(beliefs[i]!.subject.toLowerCase());
      expect(m.finding).toBeNull();
    });
    // Read, not computed again: a memo that says otherwise is believed.
    memos[1]!.normalisedStatement = "something else entirely";
    memos[2]!.finding = { reason: "secret", rule: "test" };
    expect(collapse(kept(), 10).removed.has(beliefs[1]!.beliefId)).toBe(false);
    expect(collapse(plain, 10).removed.get(beliefs[1]!.beliefId)).toBe("restatement");
    expect((await scanStatements(kept()))[2]).toEqual({ ok: false, reason: "secret" });
  });

  it("a memo's content words are taken through its holder's shared strings when it has them", () => {
    const b = storedBelief({ beliefId: "c0ffee00-0000-4000-8000-0000000000aa", subject: "Andy", statement: "Andy prefers green tea." });
    const c = storedBelief({ beliefId: "c0ffee00-0000-4000-8000-0000000000ab", subject: "Andy", statement: "Andy prefers black tea." });
    const asked: string[] = [];
    const memos = [new RowMemo(), new RowMemo()];
    for (const m of memos) m.shared = (w) => (asked.push(w), w);
    nearDuplicates([rankedCandidate(b, ["lexical"], false, 1, memos[0]), rankedCandidate(c, ["lexical"], false, 0.9, memos[1])], RETRIEVAL_POLICY);
    expect(asked).toEqual(["prefers", "green", "tea", "prefers", "black", "tea"]);
    expect(memos[0]!.contentWords).toEqual(new Set(["prefers", "green", "tea"]));
  });

  it("content words are the same when asked again, and differ by subject", () => {
    const first = contentWords("Andy prefers concise, prose-first writing.", "Andy");
    expect(contentWords("Andy prefers concise, prose-first writing.", "Andy")).toEqual(first);
    expect([...first]).toEqual(["prefers", "concise", "prose", "first", "writing"]);
    expect(contentWords("Andy prefers concise, prose-first writing.", "writing")).toEqual(new Set(["andy", "prefers", "concise", "prose", "first"]));
  });
});

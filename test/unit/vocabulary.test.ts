import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import type { IndexedBelief } from "../../src/principal-index/loading.js";
import { PrincipalIndex } from "../../src/principal-index/one-principal-index.js";
import { parseTsvector } from "../../src/principal-index/tsvector.js";
import { Vocabulary } from "../../src/principal-index/vocabulary.js";
import { RowMemo } from "../../src/ports/row-memo.js";
import { storedBelief, uid } from "./unit-helpers.js";

/**
 * An index holds one copy of each repeated value (vocabulary.ts): each row
 * arrives with its own objects for the same lexemes and labels, and every
 * object held is one more for V8's full collections to mark.
 */

const P: Principal = { tenantId: "t-vocab", principalId: "p-vocab" };

/** A row as loading.ts makes it: every value a fresh object of its own. */
function row(n: number, tsvector: string): IndexedBelief {
  return {
    belief: storedBelief({ beliefId: uid(n), subject: "Andy", statement: `Andy prefers tea, note ${n}.` }),
    subjectKey: "andy",
    terms: parseTsvector(tsvector),
    lengths: [1, 2, 0, 0],
    notTrueSinceUs: null,
    lastRejectedAt: null,
    rank: 0,
    ord: -1,
    memo: new RowMemo(),
  };
}

describe("an index's vocabulary", () => {
  it("gives rows with equal lexemes and labels the same entry, and counts its bytes once", () => {
    const vocabulary = new Vocabulary();
    const a = row(1, "'andi':1A 'prefer':2B 'tea':3B");
    const b = row(2, "'andi':1A 'prefer':2B 'coffe':3B");
    expect(a.terms[0]).not.toBe(b.terms[0]);
    vocabulary.intern(a);
    const afterOne = vocabulary.bytes;
    vocabulary.intern(b);
    expect(a.terms[0]).toBe(b.terms[0]);
    expect(a.terms[1]).toBe(b.terms[1]);
    expect(a.terms.map((t) => [t.lexeme, t.labels])).toEqual([["andi", "A"], ["prefer", "B"], ["tea", "B"]]);
    expect(b.terms.map((t) => [t.lexeme, t.labels])).toEqual([["andi", "A"], ["prefer", "B"], ["coffe", "B"]]);
    // Only "coffe" was new.
    expect(vocabulary.bytes - afterOne).toBeLessThan(afterOne / 2);
    // The same lexeme with other labels is another entry.
    const c = row(3, "'andi':1A,4B");
    vocabulary.intern(c);
    expect(c.terms[0]).not.toBe(a.terms[0]);
    expect(c.terms[0]).toEqual({ lexeme: "andi", labels: "AB" });
  });

  it("gives rows without predecessors, conflicts or source episodes one frozen empty list, and equal lengths one array", () => {
    const vocabulary = new Vocabulary();
    const a = row(1, "'andi':1A");
    const b = row(2, "'andi':1A");
    const c = row(3, "'andi':1A");
    c.belief.supersedes = [uid(1)];
    c.lengths = [1, 3, 0, 0];
    for (const r of [a, b, c]) vocabulary.intern(r);
    expect(a.belief.supersedes).toBe(b.belief.conflictsWith);
    expect(a.belief.sourceEpisodeIds).toBe(b.belief.supersedes);
    expect(a.belief.supersedes).toEqual([]);
    expect(Object.isFrozen(a.belief.supersedes)).toBe(true);
    expect(c.belief.supersedes).toEqual([uid(1)]);
    expect(a.lengths).toBe(b.lengths);
    expect(c.lengths).toEqual([1, 3, 0, 0]);
    expect(c.lengths).not.toBe(a.lengths);
  });

  it("hands each row's memo its strings, and the lower-cased subject ready", () => {
    const vocabulary = new Vocabulary();
    const a = row(1, "'andi':1A");
    a.belief.subject = "ANDY";
    vocabulary.intern(a);
    expect(a.memo.lowerSubject).toBe("andy");
    expect(a.memo.shared?.("tea")).toBe("tea");
  });

  it("is applied to every row a principal index takes in, loaded or replaced", async () => {
    const loaded = [row(1, "'andi':1A 'prefer':2B"), row(2, "'andi':1A 'tea':2B")];
    const index = new PrincipalIndex(P, { position: 1, persona: new Set(), aliases: new Map() }, loaded, { lexemes: async () => [] });
    expect(loaded[0]!.terms[0]).toBe(loaded[1]!.terms[0]);
    const replaced = row(2, "'andi':1A 'coffe':2B");
    index.upsert([replaced]);
    expect(replaced.terms[0]).toBe(loaded[0]!.terms[0]);
    expect(index.size).toBe(2);
  });
});

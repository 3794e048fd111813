import { describe, expect, it } from "vitest";
import type { StoredBelief } from "../../src/domain/model.js";
import { BeliefTable } from "../../src/principal-index/belief-table.js";
import type { IndexedBelief } from "../../src/principal-index/loading.js";
import { OrdLists } from "../../src/principal-index/ord-lists.js";
import { PackedStrings } from "../../src/principal-index/packed-strings.js";
import { parseTsvector } from "../../src/principal-index/tsvector.js";
import { pick, prng, storedBelief, uid } from "./unit-helpers.js";

/**
 * The compact index keeps no object per belief (belief-table.ts): every
 * field goes into a column and comes back out when an arm returns the row.
 * What comes out must be exactly what went in, nulls, lists, non-ASCII text
 * and all, or a recall from the index would differ from one from SQL.
 */

function row(b: StoredBelief, tsvector: string, lengths: [number, number, number, number], lastRejectedAt: Date | null = null): IndexedBelief {
  return { belief: b, subjectKey: b.subject.toLowerCase(), terms: parseTsvector(tsvector), lengths, notTrueSinceUs: null, lastRejectedAt, vector: null, ord: -1 };
}

function randomBelief(random: () => number, n: number): StoredBelief {
  const at = (days: number) => new Date(Date.UTC(2026, 0, 1) + Math.floor(days * 86_400_000) + 123);
  const maybe = (d: Date) => (random() < 0.5 ? null : d);
  return storedBelief({
    beliefId: uid(n),
    subject: pick(random, ["Andy", "Acme Corp", "Zoë", "user"]),
    statement: pick(random, ["Andy prefers tea.", "Zoë trinkt gern Café ☕ am Morgen.", "", "The user drives a 2019 Škoda."]) + ` #${n}`,
    beliefType: pick(random, ["preference", "event", "resource"]),
    predicateKey: pick(random, ["prefers", "drives", ""]),
    status: pick(random, ["active", "provisional", "superseded", "expired"] as const),
    confidence: Math.round(random() * 1000) / 1000,
    authority: pick(random, ["user", "affirmed", "inferred"] as const),
    originScope: pick(random, ["veetbot", "atlas"]),
    scopeLevel: pick(random, ["project", "user", "global"] as const),
    portability: pick(random, ["portable", "contextual", "local"] as const),
    sensitivity: pick(random, [1, 2, 3, 4] as const),
    validFrom: at(random() * 300),
    validTo: maybe(at(300 + random() * 30)),
    recordedAt: at(random() * 300),
    retractedAt: maybe(at(330)),
    supersedes: random() < 0.2 ? [uid(n + 1_000)] : [],
    conflictsWith: random() < 0.1 ? [uid(n + 2_000), uid(n + 3_000)] : [],
    evidenceCount: Math.floor(random() * 20),
    lastEvidenceAt: at(random() * 300),
    expiresHint: maybe(at(400)),
    flaggedForReview: random() < 0.3,
    sourceEpisodeIds: random() < 0.3 ? [uid(n + 4_000)] : [],
    utility: Math.round(random() * 100) / 100,
    lastUsedAt: maybe(at(200)),
    storePosition: n * 3 + 1,
  });
}

describe("the compact belief table", () => {
  it("gives back every field of every row exactly as written", () => {
    const random = prng(37);
    const table = new BeliefTable();
    const written = Array.from({ length: 3_000 }, (_, n) => randomBelief(random, n));
    written.forEach((b, o) => table.set(o, row(structuredClone(b), "'andi':1A 'tea':3B,5C", [1, 2, 1, 0]), false, false));
    expect(table.size).toBe(3_000);
    for (let o = 0; o < written.length; o++) expect(table.belief(o)).toEqual(written[o]);
  });

  it("replaces a row in place, and reads back its lexical document and lengths", () => {
    const table = new BeliefTable();
    table.set(0, row(storedBelief({ beliefId: uid(1), statement: "first" }), "'andi':1A 'tea':3B,5C", [1, 2, 0, 0]), false, false);
    table.set(1, row(storedBelief({ beliefId: uid(2), statement: "other" }), "'coffe':2B", [0, 1, 0, 0]), false, false);
    const last = new Date("2026-03-01T00:00:00Z");
    table.set(0, row(storedBelief({ beliefId: uid(1), statement: "second, longer than the first" }), "'andi':1A,4D", [1, 0, 0, 1], last), false, false);
    expect(table.size).toBe(2);
    expect(table.statement(0)).toBe("second, longer than the first");
    expect(table.statement(1)).toBe("other");
    const terms: [string, string][] = [];
    table.eachTerm(0, (lexeme, labels) => terms.push([lexeme, labels]));
    expect(terms).toEqual([["andi", "AD"]]);
    expect([0, 1, 2, 3].map((l) => table.length(0, l))).toEqual([1, 0, 0, 1]);
    expect(table.lastRejected(0)).toEqual(last);
    expect(table.lastRejected(1)).toBeNull();
  });
});

describe("packed strings", () => {
  it("round-trips any text through one buffer, growing it as needed", () => {
    const packed = new PackedStrings();
    const values = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? `naïve café ${i} 🚀` : i % 3 === 1 ? "" : "x".repeat(i % 97)));
    const slots = values.map((v) => packed.add(v));
    expect(slots.map((s) => packed.get(s))).toEqual(values);
  });
});

describe("ordinal lists", () => {
  it("adds and removes ordinals by key, and forgets a key once empty", () => {
    const lists = new OrdLists<string>();
    for (let o = 0; o < 100; o++) lists.add(o % 2 === 0 ? "even" : "odd", o);
    expect([...lists.get("even")!].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    const held = lists.bytes;
    for (let o = 1; o < 100; o += 2) lists.remove("odd", o);
    expect(lists.has("odd")).toBe(false);
    expect(lists.get("odd")).toBeUndefined();
    expect(lists.bytes).toBeLessThan(held);
    lists.remove("even", 1_000);
    expect(lists.get("even")).toHaveLength(50);
  });
});

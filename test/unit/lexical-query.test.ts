import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { dateMentions, effectiveQuery, hasPossessiveMy, nameLikeWords, namedPhrases, requestedQuery } from "../../src/recall/query-former.js";

/** What the lexical arm reads from a question besides its terms: names and dates. */
describe("named phrases", () => {
  it("lists runs of one to three words, lower-cased, possessives stripped, function words alone left out", () => {
    const phrases = namedPhrases("What did Mary Jane's sister paint?");
    expect(phrases).toContain("mary");
    expect(phrases).toContain("mary jane");
    expect(phrases).toContain("jane");
    expect(phrases).toContain("sister");
    expect(phrases).not.toContain("what");
    expect(phrases).not.toContain("did");
    expect(phrases).toContain("what did mary");
  });

  it("is empty for no text and bounded for long text", () => {
    expect(namedPhrases(null)).toEqual([]);
    expect(namedPhrases("")).toEqual([]);
    expect(namedPhrases(Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ")).length).toBe(96);
  });
});

describe("name-like words", () => {
  it("takes capitalised words of four letters or more, not function words, once each", () => {
    expect(nameLikeWords("When did Melanei meet Caroline and Melanei again in Rome?", 4)).toEqual(["melanei", "caroline", "rome"]);
    expect(nameLikeWords("What is the plan?", 4)).toEqual([]);
    expect(nameLikeWords("Where does Bob live?", 4)).toEqual([]);
  });
});

describe("date mentions", () => {
  it("reads years and month names", () => {
    expect(dateMentions("What did Kim do in May 2023?")).toEqual({ years: [2023], months: [5] });
    expect(dateMentions("Where was Kim in August and September of 2022?")).toEqual({ years: [2022], months: [8, 9] });
    expect(dateMentions("What happened in 1999?")).toEqual({ years: [1999], months: [] });
    expect(dateMentions("Did Kim travel last Dec?")).toEqual({ years: [], months: [12] });
  });

  it("does not take the verbs 'may' and 'march' or lower-case words for months", () => {
    expect(dateMentions("May I ask where Kim lives?")).toEqual({ years: [], months: [] });
    expect(dateMentions("Why did they March on the capital?")).toEqual({ years: [], months: [] });
    expect(dateMentions("what happened in june?")).toEqual({ years: [], months: [] });
    expect(dateMentions("Kim may visit soon")).toEqual({ years: [], months: [] });
    expect(dateMentions("Kim left on March 3")).toEqual({ years: [], months: [3] });
  });

  it("ignores numbers that are not years", () => {
    expect(dateMentions("Kim ran 2500 meters and 300 laps")).toEqual({ years: [], months: [] });
    expect(dateMentions(null)).toEqual({ years: [], months: [] });
  });
});

describe("possessive my turns on the ownership lookup", () => {
  const policy = RETRIEVAL_POLICY;
  const run = (text: string, moment: "in_turn" | "child_run" | "search" | "snapshot") =>
    effectiveQuery(requestedQuery({ text }), moment, policy).includeOwnedResources;

  it("for in-turn, child-run and search queries with 'my'", () => {
    expect(hasPossessiveMy("What fuel should I use for my car?")).toBe(true);
    expect(hasPossessiveMy("My car makes a noise")).toBe(true);
    for (const moment of ["in_turn", "child_run", "search"] as const) expect(run("What fuel should I use for my car?", moment)).toBe(true);
  });

  it("not without 'my', not for words containing it, never for a snapshot", () => {
    expect(run("What fuel should I use for the car?", "in_turn")).toBe(false);
    expect(run("Is the Mytilene ferry on time? Ask Amy.", "in_turn")).toBe(false);
    expect(run("Fix my deploy script", "snapshot")).toBe(false);
  });

  it("keeps an explicit request", () => {
    expect(effectiveQuery(requestedQuery({ text: "fuel?", includeOwnedResources: true }), "in_turn", policy).includeOwnedResources).toBe(true);
  });
});

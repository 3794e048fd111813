import { describe, expect, it } from "vitest";
import { adviseEpisodicSearch, eventTimeRange, isEventQuery, refersToThisSession } from "../../src/recall/escalation.js";

/** Friday 2026-07-24, mid-afternoon UTC. */
const FRIDAY = new Date("2026-07-24T15:30:00Z");
const day = (iso: string) => new Date(`${iso}T00:00:00Z`);
const range = (text: string, at = FRIDAY) => {
  const r = eventTimeRange(text, at);
  return r && { start: r.start.toISOString().slice(0, 10), end: r.end.toISOString().slice(0, 10) };
};

describe("isEventQuery", () => {
  it.each([
    "What did we decide on Tuesday?",
    "what did we decide about the schema",
    "What happened with the deploy?",
    "When did we switch billing to Stripe?",
    "Did we ever discuss rate limits?",
    "Have we talked about the pricing page?",
    "Remind me what we agreed for the launch.",
    "What did Andy say about Rust?",
    "what did you just say",
    "the bug from last week",
    "What was decided yesterday?",
    "Anything from the call last Monday?",
    "what was the plan 3 days ago",
    "What did I mention earlier in this conversation?",
    "What’s the thing we talked about in our last session?",
    "what were we discussing before lunch",
  ])("is about events: %s", (text) => {
    expect(isEventQuery(text)).toBe(true);
  });

  it.each([
    "What editor does Andy use?",
    "Which car should I buy?",
    "How do we deploy veetbot?",
    "How do I like my coffee?",
    "Do I have a meeting on Friday?",
    "What's on Tuesday?",
    "where does Andy live",
    "what is the billing service written in",
    "",
  ])("is about facts: %s", (text) => {
    expect(isEventQuery(text)).toBe(false);
  });

  it("is false for no text", () => {
    expect(isEventQuery(null)).toBe(false);
  });
});

describe("eventTimeRange (UTC days, against the reference time)", () => {
  it("resolves weekday names to the most recent such day before the reference day", () => {
    expect(range("what did we decide on Tuesday")).toEqual({ start: "2026-07-21", end: "2026-07-22" });
    expect(range("what did we decide last Tuesday")).toEqual({ start: "2026-07-21", end: "2026-07-22" });
    expect(range("what did we decide Tuesday")).toEqual({ start: "2026-07-21", end: "2026-07-22" });
    // On a Friday, "on Friday" is last week's Friday: today would be "today".
    expect(range("what did we say on Friday")).toEqual({ start: "2026-07-17", end: "2026-07-18" });
    expect(range("what did we decide on Saturday")).toEqual({ start: "2026-07-18", end: "2026-07-19" });
  });

  it("ignores weekdays that are ahead", () => {
    expect(range("what did we decide for next Tuesday's launch")).toBeNull();
    expect(range("what did we plan for the coming Monday")).toBeNull();
  });

  it("resolves today, yesterday and N days ago", () => {
    expect(range("what did we decide earlier today")).toEqual({ start: "2026-07-24", end: "2026-07-25" });
    expect(range("what happened this morning")).toEqual({ start: "2026-07-24", end: "2026-07-25" });
    expect(range("what happened yesterday")).toEqual({ start: "2026-07-23", end: "2026-07-24" });
    expect(range("what did we ship last night")).toEqual({ start: "2026-07-23", end: "2026-07-24" });
    expect(range("what did we decide 3 days ago")).toEqual({ start: "2026-07-21", end: "2026-07-22" });
    expect(range("what did we decide two days ago")).toEqual({ start: "2026-07-22", end: "2026-07-23" });
    expect(range("what did we decide a few days ago")).toEqual({ start: "2026-07-21", end: "2026-07-22" });
  });

  it("resolves weeks and months", () => {
    // ISO weeks start on Monday: this week is 2026-07-20 .. 07-26.
    expect(range("what did we decide last week")).toEqual({ start: "2026-07-13", end: "2026-07-20" });
    expect(range("what did we change this week")).toEqual({ start: "2026-07-20", end: "2026-07-25" });
    expect(range("what did we decide two weeks ago")).toEqual({ start: "2026-07-06", end: "2026-07-13" });
    expect(range("what happened last month")).toEqual({ start: "2026-06-01", end: "2026-07-01" });
    expect(range("what happened this month")).toEqual({ start: "2026-07-01", end: "2026-07-25" });
  });

  it("covers several phrases with one range", () => {
    expect(range("what did we decide on Monday and on Wednesday")).toEqual({ start: "2026-07-20", end: "2026-07-23" });
  });

  it("resolves against the reference, not the wall clock (an as_of in January)", () => {
    // 2026-01-07 is a Wednesday.
    expect(range("what did we decide yesterday", new Date("2026-01-07T08:00:00Z"))).toEqual({ start: "2026-01-06", end: "2026-01-07" });
    expect(range("what happened last month", new Date("2026-01-07T08:00:00Z"))).toEqual({ start: "2025-12-01", end: "2026-01-01" });
  });

  it("is null without time words", () => {
    expect(range("when did we switch to Postgres")).toBeNull();
    expect(eventTimeRange(null, FRIDAY)).toBeNull();
  });
});

describe("adviseEpisodicSearch", () => {
  const base = { subjects: [] as string[], answered: () => false, sessionId: "s-9", reference: FRIDAY };

  it("advises an event question with the range it names, across sessions", () => {
    expect(adviseEpisodicSearch({ ...base, text: "What did we decide on Tuesday?" })).toEqual({
      reason: "event_query",
      scope: { sessionId: "", startTime: day("2026-07-21"), endTime: day("2026-07-22"), subjects: [] },
    });
  });

  it("looks back seven days for an event question without time words", () => {
    expect(adviseEpisodicSearch({ ...base, text: "when did we switch billing to Stripe?", subjects: ["billing"], answered: () => true })).toEqual({
      reason: "event_query",
      scope: { sessionId: "", startTime: day("2026-07-17"), endTime: day("2026-07-25"), subjects: ["billing"] },
    });
  });

  it("points at the current session when the question is about it", () => {
    expect(adviseEpisodicSearch({ ...base, text: "what did I say earlier in this conversation?" })?.scope).toEqual({
      sessionId: "s-9",
      startTime: null,
      endTime: null,
      subjects: [],
    });
  });

  it("advises when a named subject has no belief above the floor, in the current session", () => {
    const advice = adviseEpisodicSearch({
      ...base,
      text: "how is Zanzibar going",
      subjects: ["Andy", "Zanzibar"],
      answered: (s) => s === "Andy",
    });
    expect(advice).toEqual({ reason: "subject_not_found", scope: { sessionId: "s-9", startTime: null, endTime: null, subjects: ["Zanzibar"] } });
  });

  it("falls back to the lookback window when the session is unknown", () => {
    const advice = adviseEpisodicSearch({ ...base, sessionId: "", text: null, subjects: ["Zanzibar"] });
    expect(advice?.scope).toEqual({ sessionId: "", startTime: day("2026-07-17"), endTime: day("2026-07-25"), subjects: ["Zanzibar"] });
  });

  it("says nothing when beliefs answer a factual question", () => {
    expect(adviseEpisodicSearch({ ...base, text: "What editor does Andy use?", subjects: ["Andy"], answered: () => true })).toBeNull();
    expect(adviseEpisodicSearch({ ...base, text: "What editor does Andy use?" })).toBeNull();
    expect(adviseEpisodicSearch({ ...base, text: null })).toBeNull();
  });

  it("is deterministic: the same input gives the same advice", () => {
    const input = { ...base, text: "what did we decide last week?", subjects: ["veetbot"] };
    expect(adviseEpisodicSearch(input)).toEqual(adviseEpisodicSearch(input));
  });

  it("recognises the current-session phrasing", () => {
    expect(refersToThisSession("what did you just say")).toBe(true);
    expect(refersToThisSession("what did we decide last week")).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { effectiveQuery, FUNCTION_WORDS, lexicalTerms, requestedQuery, type RequestedQuery } from "../../src/recall/query-former.js";
import { clauses, SELF_KNOWLEDGE_RULES, selfKnowledgeCues, selfKnowledgeTypes } from "../../src/recall/self-knowledge.js";

function requested(overrides: Partial<RequestedQuery> = {}): RequestedQuery {
  return requestedQuery({ currentScope: "veetbot", text: "How does Andy like to write?", ...overrides });
}

describe("effectiveQuery: moment defaults", () => {
  it("snapshot: core profile, 40 items, 1500 tokens, core floor, no provisional", () => {
    const q = effectiveQuery(requested(), "snapshot", P);
    expect(q.profile).toBe("core");
    expect(q.maxItems).toBe(40);
    expect(q.budgetTokens).toBe(1500);
    expect(q.minScore).toBe(0.35);
    expect(q.includeProvisional).toBe(false);
  });

  it("snapshot forces include_provisional = false even when asked for", () => {
    expect(effectiveQuery(requested({ includeProvisional: true }), "snapshot", P).includeProvisional).toBe(false);
  });

  it("in_turn: task profile, 12 items, 600 tokens, task floor, provisional included by default", () => {
    const q = effectiveQuery(requested(), "in_turn", P);
    expect(q).toMatchObject({ profile: "task", maxItems: 12, budgetTokens: 600, minScore: 0.45, includeProvisional: true });
  });

  it("child_run: task profile, 15 items, 500 tokens", () => {
    const q = effectiveQuery(requested(), "child_run", P);
    expect(q).toMatchObject({ profile: "task", maxItems: 15, budgetTokens: 500, minScore: 0.45, includeProvisional: true });
  });

  it("search: deep profile, 10 items, 800 tokens, deep floor", () => {
    const q = effectiveQuery(requested(), "search", P);
    expect(q).toMatchObject({ profile: "deep", maxItems: 10, budgetTokens: 800, minScore: 0.4, includeProvisional: true });
  });

  it("keeps an explicit include_provisional = false outside the snapshot", () => {
    expect(effectiveQuery(requested({ includeProvisional: false }), "in_turn", P).includeProvisional).toBe(false);
  });

  it("honours an explicit profile and takes that profile's floor", () => {
    const q = effectiveQuery(requested({ profile: "deep" }), "in_turn", P);
    expect(q.profile).toBe("deep");
    expect(q.minScore).toBe(P.profiles.deep.floor);
    // The proto contract: "Unset means TASK (CORE for the snapshot moment)" - an explicit
    // profile is honoured for a snapshot too; only include_provisional is forced.
    const snap = effectiveQuery(requested({ profile: "task", includeProvisional: true }), "snapshot", P);
    expect(snap.profile).toBe("task");
    expect(snap.minScore).toBe(0.45);
    expect(snap.includeProvisional).toBe(false);
  });
});

describe("effectiveQuery: limits and floor", () => {
  it("keeps explicit item and token limits within the policy's bounds", () => {
    const q = effectiveQuery(requested({ maxItems: 3, budgetTokens: 250 }), "in_turn", P);
    expect(q.maxItems).toBe(3);
    expect(q.budgetTokens).toBe(250);
  });

  it("caps item and token limits at policy.limits", () => {
    const q = effectiveQuery(requested({ maxItems: 5000, budgetTokens: 1_000_000 }), "in_turn", P);
    expect(q.maxItems).toBe(P.limits.maxItems);
    expect(q.maxItems).toBe(200);
    expect(q.budgetTokens).toBe(16_000);
  });

  it("never lets a snapshot exceed its session type's caps, whatever was asked", () => {
    const q = effectiveQuery(requested({ maxItems: 5000, budgetTokens: 1_000_000 }), "snapshot", P);
    expect([q.maxItems, q.budgetTokens]).toEqual([40, 1500]);
    const smaller = effectiveQuery(requested({ maxItems: 10, budgetTokens: 300 }), "snapshot", P);
    expect([smaller.maxItems, smaller.budgetTokens]).toEqual([10, 300]);
  });

  it("accepts values exactly at the limits", () => {
    const q = effectiveQuery(requested({ maxItems: 200, budgetTokens: 16_000 }), "in_turn", P);
    expect(q.maxItems).toBe(200);
    expect(q.budgetTokens).toBe(16_000);
  });

  it("keeps an explicit min_score, including 0", () => {
    expect(effectiveQuery(requested({ minScore: 0 }), "in_turn", P).minScore).toBe(0);
    expect(effectiveQuery(requested({ minScore: 0.72 }), "snapshot", P).minScore).toBe(0.72);
  });
});

describe("effectiveQuery: anchors and pass-through", () => {
  it("trims, drops blank, dedupes and sorts subjects", () => {
    const q = effectiveQuery(requested({ subjects: ["  veetbot ", "Andy", "", "   ", "veetbot", "Acme Corp"] }), "in_turn", P);
    expect(q.subjects).toEqual(["Acme Corp", "Andy", "veetbot"]);
  });

  it("dedupes and sorts belief types and structured belief types", () => {
    const q = effectiveQuery(
      requested({ beliefTypes: ["skill", "preference", "skill"], structuredBeliefTypes: ["status", "decision", "status"] }),
      "in_turn",
      P,
    );
    expect(q.beliefTypes).toEqual(["preference", "skill"]);
    expect(q.structuredBeliefTypes).toEqual(["decision", "status"]);
  });

  it("passes the other fields through unchanged", () => {
    const asOf = new Date("2026-05-01T00:00:00Z");
    const knownAt = new Date("2026-06-01T00:00:00Z");
    const q = effectiveQuery(
      requested({ currentScope: "atlas", text: "deploys", asOf, knownAt, includeSuperseded: true, includeOwnedResources: true }),
      "in_turn",
      P,
    );
    expect(q).toMatchObject({ currentScope: "atlas", text: "deploys", asOf, knownAt, includeSuperseded: true, includeOwnedResources: true });
  });

  it("does not mutate the request", () => {
    const req = requested({ subjects: ["b", "a"], includeProvisional: true });
    const copy = structuredClone(req);
    effectiveQuery(req, "snapshot", P);
    expect(req).toEqual(copy);
  });

  it("is deterministic", () => {
    const req = requested({ subjects: ["b", "a", "b"] });
    expect(effectiveQuery(req, "in_turn", P)).toEqual(effectiveQuery(req, "in_turn", P));
  });
});

describe("lexicalTerms", () => {
  it("returns nothing for no text", () => {
    expect(lexicalTerms(null)).toEqual([]);
    expect(lexicalTerms("")).toEqual([]);
    expect(lexicalTerms("  ?! ")).toEqual([]);
  });

  it("removes function words and lower-cases, keeping order", () => {
    expect(lexicalTerms("What does Andy think about the new deploy process?")).toEqual(["andy", "think", "new", "deploy", "process"]);
  });

  it("keeps negations", () => {
    expect(lexicalTerms("Andy does not like coffee, never tea, and no sugar")).toEqual([
      "andy",
      "not",
      "like",
      "coffee",
      "never",
      "tea",
      "no",
      "sugar",
    ]);
    for (const negation of ["not", "never", "no", "nor"]) expect(FUNCTION_WORDS.has(negation)).toBe(false);
  });

  it("dedupes, keeping the first occurrence's position", () => {
    expect(lexicalTerms("Coffee tea COFFEE milk tea")).toEqual(["coffee", "tea", "milk"]);
  });

  it("gives nothing for text made only of function words", () => {
    expect(lexicalTerms("What is it that they have been doing?")).toEqual([]);
    expect(lexicalTerms("Can you tell me about it please")).toEqual([]);
  });

  it("keeps digits and non-ASCII letters, splitting on punctuation", () => {
    expect(lexicalTerms("Deploy v2 to Zürich's café in 2026")).toEqual(["deploy", "v2", "zürich", "café", "2026"]);
    expect(lexicalTerms("prose-first")).toEqual(["prose", "first"]);
  });

  it("caps the number of terms at 32 by default, and at maxTerms when given", () => {
    const words = Array.from({ length: 40 }, (_, i) => `term${i}`);
    expect(lexicalTerms(words.join(" "))).toEqual(words.slice(0, 32));
    expect(lexicalTerms(words.join(" "), 3)).toEqual(["term0", "term1", "term2"]);
  });

  // Regression, fixed (src/recall/query-former.ts:39-48): the module keeps "not"/"never"/"no" because
  // "they carry meaning", but FUNCTION_WORDS also lists "don", "doesn", "didn", "isn", "aren",
  // "wasn", "weren" and "t", so contracted negations vanish: "doesn't like" and "does like"
  // give the same terms, as do "Andy isn't vegan" and "Andy is vegan". (Low impact today:
  // to_tsquery('english') in the store also drops these stop words.)
  it("keeps contracted negations (doesn't, isn't)", () => {
    const terms = lexicalTerms("Andy doesn't like coffee");
    expect(terms).not.toEqual(lexicalTerms("Andy does like coffee"));
  });
});

describe("self-knowledge type anchors", () => {
  const PREF = ["preference"];
  const REL = ["relationship"];
  const USER = ["user_model_attr"];
  const ROUTINE = ["preference", "user_model_attr"];

  // Real phrasings, each with the types it must anchor (sorted).
  const positives: [string, string[]][] = [
    ["How do I like my coffee?", PREF],
    ["how do i like my coffee", PREF],
    ["Which coffee do I like?", PREF],
    ["Do I like Vim or Helix better?", PREF],
    ["What music do I really enjoy?", PREF],
    ["Which editor do I prefer?", PREF],
    ["What food do I hate?", PREF],
    ["Remind me what I love about Lisbon.", PREF],
    ["What's my favourite restaurant?", PREF],
    ["What is my favorite color?", PREF],
    ["Tell me my preferences for code reviews.", PREF],
    ["What are my hobbies?", PREF],
    ["What kind of books do I read?", PREF],
    ["What bands am I into?", PREF],
    ["Am I a fan of jazz?", PREF],
    ["How do I take my tea?", PREF],
    ["What do I usually order at Luigi’s?", PREF],
    ["How did I like the concert?", PREF],
    ["What's my wife's name?", REL],
    ["Who is my best friend?", REL],
    ["When is my mom's birthday?", REL],
    ["Who's my boss?", REL],
    ["What does my sister do?", REL],
    ["Who am I married to?", REL],
    ["Who do I report to?", REL],
    ["Am I still married?", REL],
    ["Do I have any kids?", REL],
    ["How many children do I have?", REL],
    ["Where does my brother live?", REL],
    ["What is my dog called?", REL],
    ["Remind me of my wife’s birthday.", REL],
    ["Who am I?", USER],
    ["What is my name?", USER],
    ["What's my job?", USER],
    ["Where do I live?", USER],
    ["Where am I from?", USER],
    ["How old am I?", USER],
    ["When was I born?", USER],
    ["What do I do for a living?", USER],
    ["Which vehicle do I drive?", USER],
    ["What car do I own?", USER],
    ["What phone do I have?", USER],
    ["Which editor do I use?", USER],
    ["What languages do I speak?", USER],
    ["Do I own a bike?", USER],
    ["Am I vegetarian?", USER],
    ["What are my allergies?", USER],
    ["What's my time zone?", USER],
    ["Where did I grow up?", USER],
    ["What am I allergic to?", USER],
    ["Which team am I on?", USER],
    ["What is my role on this project?", USER],
    ["What do you know about me?", ["preference", "relationship", "user_model_attr"]],
    ["Tell me about myself.", ["preference", "relationship", "user_model_attr"]],
    ["Do I drink coffee?", ROUTINE],
    ["What do I usually do on Sunday mornings?", ROUTINE],
    ["What do I usually eat for breakfast?", ROUTINE],
    ["What's my morning routine?", ROUTINE],
    ["What do I do every weekend?", ROUTINE],
    ["Where do I go on Fridays?", ROUTINE],
    ["What do I typically do after work?", ROUTINE],
    // Compound questions keep each clause's types.
    ["What's my wife's name and which coffee do I like?", ["preference", "relationship"]],
    ["Where do I live, and who is my manager?", ["relationship", "user_model_attr"]],
    ["Which car should I buy, and what car do I drive now?", USER],
    ["How old am I? Also, what do I like to read?", ["preference", "user_model_attr"]],
  ];

  const negatives = [
    // Advice questions.
    "Which car should I buy?",
    "What laptop should I get?",
    "Should I move to Berlin?",
    "What would you recommend for dinner?",
    "Can you suggest a good book?",
    "Is it worth switching to Helix?",
    "Which framework is best for this service?",
    "Help me choose a new phone.",
    "What should I cook for my wife tonight?",
    // Generic how-to questions.
    "How do I deploy this service?",
    "How do I run the tests?",
    "How can I rotate the API keys?",
    "How do I use the CLI?",
    "What do I have to do to release?",
    "What command do I run to migrate?",
    "What options do I have for caching?",
    "How do I usually deploy this service?",
    "What do I usually get wrong in reviews?",
    "How do I set up my laptop for the project?",
    "Can you fix my code?",
    "How do I configure my editor for TypeScript?",
    // Requests, not preferences.
    "I'd like to deploy the staging branch.",
    "I would like a summary of the incident.",
    // Not about the user.
    "How does Andy like to write?",
    "What do you like?",
    "What do we usually do on Sunday mornings?",
    "Who are you?",
    "Who am I talking to?",
    "What is the name of the deploy target?",
    "Summarise the meeting notes.",
    // Events, not profile facts: the escalation signal's business.
    "What did I say about the deploy yesterday?",
    "Who did I meet last week?",
    "Do I have a meeting today?",
    "What time is my flight?",
    "Where should I go for dinner?",
    "",
  ];

  it.each(positives)("%j anchors %j", (text, types) => {
    expect(selfKnowledgeTypes(text)).toEqual(types);
  });

  it.each(negatives.map((t) => [t]))("%j does not activate it", (text) => {
    expect(selfKnowledgeCues(text).map((r) => r.cue)).toEqual([]);
    expect(selfKnowledgeTypes(text)).toEqual([]);
  });

  it("gives nothing for no text", () => {
    expect(selfKnowledgeTypes(null)).toEqual([]);
  });

  it("splits clauses at punctuation and conjunctions, spelling out contractions", () => {
    expect(clauses("What's my wife's name and which coffee do I like?")).toEqual(["what is my wife's name", "which coffee do i like"]);
    expect(clauses("I’m tired, but I've   got time; ok.")).toEqual(["i am tired", "i have got time", "ok"]);
  });

  it("records the requested types on the effective query for in-turn, child-run and search", () => {
    for (const moment of ["in_turn", "child_run", "search"] as const) {
      const q = effectiveQuery(requested({ text: "What's my wife's name and which coffee do I like?" }), moment, P);
      expect(q.structuredBeliefTypes, moment).toEqual(["preference", "relationship"]);
    }
  });

  it("unions them with the caller's structured types, deduplicated and sorted", () => {
    const q = effectiveQuery(requested({ text: "How do I like my coffee?", structuredBeliefTypes: ["skill", "preference"] }), "in_turn", P);
    expect(q.structuredBeliefTypes).toEqual(["preference", "skill"]);
  });

  it("leaves the snapshot's anchors alone: its text is the opening goal", () => {
    expect(effectiveQuery(requested({ text: "How do I like my coffee?" }), "snapshot", P).structuredBeliefTypes).toEqual([]);
  });

  it("adds nothing for other questions, and never touches the AND filter", () => {
    const q = effectiveQuery(requested({ text: "How do I deploy this service?" }), "in_turn", P);
    expect(q.structuredBeliefTypes).toEqual([]);
    expect(effectiveQuery(requested({ text: "How do I like my coffee?" }), "in_turn", P).beliefTypes).toEqual([]);
  });

  it("is anchored at the policy's type-only weight, below an exact subject", () => {
    expect(P.typeAnchorWeight).toBe(0.25);
  });

  it("lists a cue and at least one type for every rule", () => {
    for (const rule of SELF_KNOWLEDGE_RULES) {
      expect(rule.cue.length).toBeGreaterThan(0);
      expect(rule.types.length).toBeGreaterThan(0);
    }
  });
});

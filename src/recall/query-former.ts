import type { Moment, RecallQuery, SessionType } from "../domain/model.js";
import type { MomentDefaults, RetrievalPolicy } from "./policy.js";
import { selfKnowledgeTypes } from "./self-knowledge.js";

/**
 * Step 1: from what the caller sent to the effective query the pipeline runs.
 * Deterministic, no model call. Moment rules are applied here so the trace
 * records the query that actually ran (a snapshot never includes provisional
 * beliefs, whatever was asked; an explicit self-knowledge question anchors
 * the types it asks about).
 */

/** The query as the caller sent it; unset numbers are 0, unset booleans undefined. */
export interface RequestedQuery extends Omit<RecallQuery, "includeProvisional" | "profile" | "minScore"> {
  includeProvisional: boolean | undefined;
  profile: RecallQuery["profile"] | undefined;
  minScore: number | undefined;
}

/** A request with nothing set but what `overrides` gives, as a caller sends it (no moment defaults yet). */
export function requestedQuery(overrides: Partial<RequestedQuery> = {}): RequestedQuery {
  return {
    currentScope: "",
    text: null,
    subjects: [],
    beliefTypes: [],
    structuredBeliefTypes: [],
    includeOwnedResources: false,
    asOf: null,
    knownAt: null,
    includeSuperseded: false,
    includeProvisional: undefined,
    profile: undefined,
    budgetTokens: 0,
    maxItems: 0,
    minScore: undefined,
    ...overrides,
  };
}

/** What the agent is working on (RecallRequest.working_state); every part optional. */
export interface WorkingState {
  objective: string;
  openQuestions: readonly string[];
  activeEntities: readonly string[];
  currentMessage: string;
}

/**
 * The query the working state asks for, beside what the caller put in the
 * query itself: the caller's text first, then the current message (one
 * signal among several, not the whole query), the open questions and the
 * objective, as one OR text of intent; the active entities join the
 * subjects, for the structured arm and the alias table. Deterministic.
 */
export function fromWorkingState(requested: RequestedQuery, working: WorkingState | null): RequestedQuery {
  if (working === null) return requested;
  const parts = [requested.text ?? "", working.currentMessage, ...working.openQuestions, working.objective]
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const text = [...new Set(parts)].join("\n");
  return {
    ...requested,
    text: text === "" ? null : text,
    subjects: [...requested.subjects, ...working.activeEntities],
  };
}

export function effectiveQuery(
  requested: RequestedQuery,
  moment: Moment | "search",
  policy: RetrievalPolicy,
  sizing: { sessionType: SessionType; contextWindowTokens: number } = { sessionType: "interactive", contextWindowTokens: 0 },
): RecallQuery {
  const defaults = moment === "snapshot" ? snapshotDefaults(policy, sizing) : policy.moments[moment];
  const profile = requested.profile ?? defaults.profile;
  // A self-knowledge question ("How do I like my coffee?") anchors the structured arm to the
  // requested types (self-knowledge.ts), so the trace records them. A snapshot's text is the
  // opening goal, not a question: its anchors stay the durable core.
  const selfTypes = moment === "snapshot" ? [] : selfKnowledgeTypes(requested.text);
  return {
    ...requested,
    // A possessive "my" turns on the bounded ownership lookup ("What fuel should I use for my
    // car?" finds "User has a 2026 Aster S8."); never for a snapshot, whose text is a goal.
    includeOwnedResources: requested.includeOwnedResources || (moment !== "snapshot" && hasPossessiveMy(requested.text)),
    subjects: [...new Set(requested.subjects.map((s) => s.trim()).filter((s) => s.length > 0))].sort(),
    beliefTypes: [...new Set(requested.beliefTypes)].sort(),
    structuredBeliefTypes: [...new Set([...requested.structuredBeliefTypes, ...selfTypes])].sort(),
    includeProvisional: moment === "snapshot" ? false : (requested.includeProvisional ?? true),
    profile,
    // Moment defaults are also ceilings for the snapshot: a caller may ask for less, never more.
    maxItems: Math.min(requested.maxItems || defaults.maxItems, moment === "snapshot" ? defaults.maxItems : policy.limits.maxItems),
    budgetTokens: Math.min(
      requested.budgetTokens || defaults.budgetTokens,
      moment === "snapshot" ? defaults.budgetTokens : policy.limits.budgetTokens,
    ),
    minScore: requested.minScore ?? policy.profiles[profile].floor,
  };
}

/**
 * Snapshot caps: the session type's items and tokens, and never more than a
 * share of the declared context window; whichever binds first wins. A larger
 * window is not a reason for a larger snapshot.
 */
export function snapshotDefaults(
  policy: RetrievalPolicy,
  sizing: { sessionType: SessionType; contextWindowTokens: number },
): MomentDefaults {
  const caps = policy.snapshotCaps[sizing.sessionType];
  const windowCap = sizing.contextWindowTokens > 0 ? Math.floor(sizing.contextWindowTokens * policy.snapshotWindowShare) : Infinity;
  return { maxItems: caps.maxItems, budgetTokens: Math.min(caps.budgetTokens, windowCap), profile: policy.moments.snapshot.profile };
}

/**
 * English function words removed before lexical matching: they match almost
 * every statement and turn an OR query into noise. Negations ("not", "never",
 * "no") are deliberately absent: they carry meaning.
 */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the this that these those is are was were be been being am do does did doing have has had having " +
    "i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs " +
    "what which who whom whose when where why how " +
    "and or but if then so because as of at by for with about against between into through during before after " +
    "above below to from up down in out on off over under again further once here there all any both each few " +
    "more most other some such only own same than too very can will just should would could may might must shall " +
    "s t don doesn didn isn aren wasn weren also get got please tell know"
  ).split(" "),
);

const APOSTROPHE = /['’]/;

/** Content terms of a text for the lexical arm: lower-cased, function words removed, order-stable, deduplicated. */
export function lexicalTerms(text: string | null, maxTerms = 32): string[] {
  if (!text) return [];
  // Contracted negations become "not" before splitting, so "doesn't" keeps its meaning. Most texts
  // have no apostrophe, and are not scanned three more times for one.
  const lower = text.toLowerCase();
  const expanded = !APOSTROPHE.test(lower)
    ? lower
    : lower
        .replace(/\bcan['’]t\b/g, "can not")
        .replace(/\bwon['’]t\b/g, "will not")
        .replace(/n['’]t\b/g, " not");
  const words = expanded.match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms: string[] = [];
  for (const w of words) {
    if (FUNCTION_WORDS.has(w) || terms.includes(w)) continue;
    terms.push(w);
    if (terms.length >= maxTerms) break;
  }
  return terms;
}

/**
 * Phrases of the text that may name a subject: every run of one to three
 * words, lower-cased, in order of appearance. Matched against the subjects
 * of the principal's beliefs (exact, after lower-casing), so "What did
 * Melanie paint?" boosts beliefs about Melanie without the caller naming her.
 */
export function namedPhrases(text: string | null, maxWords = 3, maxPhrases = 96): string[] {
  if (!text) return [];
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*/gu) ?? [];
  const cleaned = words.map((w) => w.replace(/['’]s$/u, "").replace(/[.'’-]+$/u, ""));
  const phrases: string[] = [];
  for (let n = 1; n <= maxWords; n += 1) {
    for (let i = 0; i + n <= cleaned.length; i += 1) {
      const phrase = cleaned.slice(i, i + n).join(" ");
      if (n === 1 && FUNCTION_WORDS.has(phrase)) continue;
      if (!phrases.includes(phrase)) phrases.push(phrase);
      if (phrases.length >= maxPhrases) return phrases;
    }
  }
  return phrases;
}

/**
 * Capitalised words of the text that could be a misspelt name ("Melanei"):
 * the lexical arm compares them with the principal's subjects by trigram
 * similarity. Function words and short words are left out.
 */
export function nameLikeWords(text: string | null, minLength: number, max = 8): string[] {
  if (!text) return [];
  const words: string[] = [];
  for (const m of text.matchAll(/\p{Lu}[\p{L}\p{N}]*/gu)) {
    const w = m[0].toLowerCase();
    if (w.length < minLength || FUNCTION_WORDS.has(w) || words.includes(w)) continue;
    words.push(w);
    if (words.length >= max) break;
  }
  return words;
}

const MONTHS = [
  ["january", "jan"],
  ["february", "feb"],
  ["march", "mar"],
  ["april", "apr"],
  ["may"],
  ["june", "jun"],
  ["july", "jul"],
  ["august", "aug"],
  ["september", "sep", "sept"],
  ["october", "oct"],
  ["november", "nov"],
  ["december", "dec"],
] as const;

/**
 * Months and years the text names ("in May 2023", "last August"), for the
 * lexical arm's date boost. A month counts only when capitalised, and "May"
 * and "March" only next to a number or after a preposition of time, so the
 * verbs do not count.
 */
export function dateMentions(text: string | null): { years: number[]; months: number[] } {
  if (!text) return { years: [], months: [] };
  const years = [...new Set([...text.matchAll(/\b(1[89]\d\d|20\d\d)\b/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
  const months = new Set<number>();
  for (const m of text.matchAll(/(?<before>\b\w+\s+)?\b(?<name>\p{Lu}\p{Ll}+)\.?(?<after>\s+\d+)?/gu)) {
    const name = m.groups!.name!.toLowerCase();
    const index = MONTHS.findIndex((names) => (names as readonly string[]).includes(name));
    if (index < 0) continue;
    const ambiguous = name === "may" || name === "march" || name === "mar";
    const timePreposition = /^(in|of|during|since|until|by|from|early|late|mid|last|next|this|before|after)\s+$/i.test(m.groups!.before ?? "");
    if (ambiguous && !timePreposition && m.groups!.after === undefined) continue;
    months.add(index + 1);
  }
  return { years, months: [...months].sort((a, b) => a - b) };
}

/** True when the text refers to something of the speaker's with a possessive "my". */
export function hasPossessiveMy(text: string | null): boolean {
  return text !== null && /(^|[^\p{L}\p{N}])my(?![\p{L}\p{N}])/iu.test(text);
}

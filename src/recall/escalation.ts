import type { EpisodeSearchAdvice, SuggestedEpisodeScope } from "../domain/model.js";

/**
 * The escalation signal ("Beliefs and episodes are different queries").
 * Beliefs answer "what is true"; the event log answers "what happened".
 * Episodic search is an escalation, advised when
 *
 * - the question is explicitly about events ("what did we decide on
 *   Tuesday", "what happened", "when did we …", "last week"), or
 * - it names a subject and no belief about that subject made it above the
 *   relevance floor (the subject may only exist in the event log so far).
 *
 * The advice carries a suggested scope for RecallEpisodes; the server never
 * runs episodic search by itself. Pure and deterministic: relative day names
 * are resolved against the reference time the caller passes (the query's
 * as_of, else now), in UTC days.
 */

const DAY_MS = 86_400_000;

/** How far back an event question with no time words looks: the reference day and the seven before it. */
export const DEFAULT_LOOKBACK_DAYS = 7;

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;
const WEEKDAY = WEEKDAYS.join("|");
const PERSON = "we|i|you|they|he|she|the\\s+team";
const EVENT_VERB =
  "decide|decided|say|said|discuss|discussed|agree|agreed|talk|talked|conclude|concluded|settle|settled|" +
  "choose|chose|pick|picked|ship|shipped|deploy|deployed|plan|planned|mention|mentioned|tell|told|ask|asked|" +
  "do|did|change|changed|meet|met|fix|fixed|promise|promised|go\\s+with|went\\s+with";

/** Phrasings that ask what happened rather than what is true. */
const EVENT_PATTERNS: readonly RegExp[] = [
  // "what did we decide", "what have you told", "what did Andy say"
  new RegExp(`\\bwhat\\s+(did|have|had)\\s+(${PERSON}|\\w+)\\s+(\\w+\\s+)?(${EVENT_VERB})\\b`),
  // "what happened", "what was decided", "what were we discussing"
  /\bwhat\s+(happened|was\s+(said|decided|discussed|agreed|done)|were\s+(we|you)\s+(discussing|talking|doing))\b/,
  // "when did we …", "when was it …"
  new RegExp(`\\bwhen\\s+(did|was|were|have|had)\\s+(${PERSON}|it|that|this)\\b`),
  // "did we ever discuss", "have we talked about"
  new RegExp(`\\b(did|have|had)\\s+(${PERSON})\\s+(ever\\s+|already\\s+)?(${EVENT_VERB})\\b`),
  // "the decision we made", "what we agreed", "remind me what we said"
  new RegExp(`\\b(${PERSON})\\s+(just\\s+)?(decided|discussed|talked\\s+about|agreed|said|mentioned|promised|went\\s+with)\\b`),
  // "the call from Monday", "the retro yesterday" (not "a meeting on Friday", which may be ahead)
  /\b(meeting|call|standup|retro|conversation|discussion|session)\s+(from|last|yesterday|earlier)\b/,
];

/** Time words that place the question in the past; each also yields a range. */
const PAST_TIME_PATTERNS: readonly RegExp[] = [
  /\b(yesterday|last\s+night|earlier\s+today|this\s+morning|this\s+afternoon)\b/,
  /\b(last|previous|past)\s+(week|month)\b/,
  new RegExp(`\\blast\\s+(${WEEKDAY})\\b`),
  /\b(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of)\s+(days?|weeks?)\s+ago\b/,
  /\b(earlier|before)\s+in\s+(this|the)\s+(session|conversation|chat)\b/,
  /\b(in\s+)?(our|the|my)\s+(last|previous|earlier)\s+(session|conversation|chat|meeting|call)\b/,
];

/** Phrases that point at the current session rather than a calendar range. */
const THIS_SESSION = /\b(earlier\s+in\s+(this|the)\s+(session|conversation|chat)|in\s+this\s+(session|conversation|chat)|just\s+(now|said|say|mentioned|asked|told|decided)|a\s+(moment|minute|few\s+minutes)\s+ago|earlier\s+on)\b/;

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  "a few": 3, "a couple of": 2,
};

/** Lower-case, straight apostrophes, single spaces. */
function normalise(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'").replace(/\s+/g, " ").trim();
}

/** True when the question is explicitly about events rather than facts. */
export function isEventQuery(text: string | null): boolean {
  if (!text) return false;
  const t = normalise(text);
  return EVENT_PATTERNS.some((re) => re.test(t)) || PAST_TIME_PATTERNS.some((re) => re.test(t)) || THIS_SESSION.test(t);
}

/** True when the question is about the current session ("earlier in this conversation", "just now"). */
export function refersToThisSession(text: string | null): boolean {
  return !!text && THIS_SESSION.test(normalise(text));
}

export interface TimeRange {
  /** Inclusive. */
  start: Date;
  /** Exclusive. */
  end: Date;
}

function startOfDay(d: Date): Date {
  return new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
}

function addDays(d: Date, n: number): Date {
  return new Date(d.getTime() + n * DAY_MS);
}

/** Monday 00:00 UTC of the ISO week containing d. */
function startOfWeek(d: Date): Date {
  const day = startOfDay(d);
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return addDays(day, -sinceMonday);
}

function startOfMonth(d: Date, offset = 0): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1));
}

/** The most recent given weekday strictly before the reference day (one to seven days back). */
function previousWeekday(reference: Date, weekday: number): Date {
  const today = startOfDay(reference);
  const back = ((today.getUTCDay() - weekday + 7) % 7) || 7;
  return addDays(today, -back);
}

/**
 * The calendar range a question's time words name, in UTC days, resolved
 * against `reference`; null when it names none. Several phrases give the
 * smallest range covering all of them.
 *
 * - "today", "this morning", "earlier today": the reference day
 * - "yesterday", "last night": the day before
 * - "on Tuesday", "last Tuesday", "Tuesday's meeting": the most recent Tuesday before the reference day
 * - "N days ago": that day; "N weeks ago": that ISO week (Monday to Monday)
 * - "last week" / "this week": the previous ISO week / this week up to the end of the reference day
 * - "last month" / "this month": the previous calendar month / this month up to the end of the reference day
 */
export function eventTimeRange(text: string | null, reference: Date): TimeRange | null {
  if (!text) return null;
  const t = normalise(text);
  const today = startOfDay(reference);
  const ranges: TimeRange[] = [];
  const day = (d: Date) => ranges.push({ start: d, end: addDays(d, 1) });

  if (/\b(today|this\s+morning|this\s+afternoon|this\s+evening|tonight)\b/.test(t)) day(today);
  if (/\b(yesterday|last\s+night)\b/.test(t)) day(addDays(today, -1));
  for (const m of t.matchAll(new RegExp(`\\b(?:(next|coming|on|last|this\\s+past|since)\\s+)?(${WEEKDAY})\\b`, "g"))) {
    // Only past weekdays: "next Friday" names no event yet. (This runs for event questions only.)
    if (m[1] === "next" || m[1] === "coming") continue;
    day(previousWeekday(reference, WEEKDAYS.indexOf(m[2] as (typeof WEEKDAYS)[number])));
  }
  for (const m of t.matchAll(/\b(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of) (days?|weeks?) ago\b/g)) {
    const n = /^\d+$/.test(m[1]!) ? Number(m[1]) : (NUMBER_WORDS[m[1]!] ?? 1);
    if (m[2]!.startsWith("day")) day(addDays(today, -n));
    else ranges.push({ start: addDays(startOfWeek(reference), -7 * n), end: addDays(startOfWeek(reference), -7 * n + 7) });
  }
  if (/\b(last|previous|past) week\b/.test(t)) ranges.push({ start: addDays(startOfWeek(reference), -7), end: startOfWeek(reference) });
  if (/\bthis week\b/.test(t)) ranges.push({ start: startOfWeek(reference), end: addDays(today, 1) });
  if (/\b(last|previous|past) month\b/.test(t)) ranges.push({ start: startOfMonth(reference, -1), end: startOfMonth(reference) });
  if (/\bthis month\b/.test(t)) ranges.push({ start: startOfMonth(reference), end: addDays(today, 1) });

  if (ranges.length === 0) return null;
  return {
    start: new Date(Math.min(...ranges.map((r) => r.start.getTime()))),
    end: new Date(Math.max(...ranges.map((r) => r.end.getTime()))),
  };
}

export interface EscalationInput {
  text: string | null;
  /** The subjects the query names, as given (trimmed, deduplicated). */
  subjects: readonly string[];
  /**
   * Whether some returned belief (above the floor) is about this named
   * subject, directly or through an alias. The caller resolves aliases.
   */
  answered: (subject: string) => boolean;
  /** The session the recall belongs to ("" when unknown). */
  sessionId: string;
  /** The query's as_of, else now: relative day names resolve against it. */
  reference: Date;
}

/**
 * Whether to advise episodic search, and where. Null when beliefs suffice.
 *
 * Scope: the time range the question names, if any; else the current session
 * when the question is about it, or when a named subject is missing (it may
 * have come up in this session and not be formed into a belief yet); else the
 * reference day and the DEFAULT_LOOKBACK_DAYS before it.
 */
export function adviseEpisodicSearch(input: EscalationInput): EpisodeSearchAdvice | null {
  const eventQuery = isEventQuery(input.text);
  const missing = input.subjects.filter((s) => !input.answered(s));
  if (!eventQuery && missing.length === 0) return null;

  const reason = eventQuery ? "event_query" : "subject_not_found";
  const range = eventQuery ? eventTimeRange(input.text, input.reference) : null;
  const preferSession = input.sessionId !== "" && (refersToThisSession(input.text) || (!eventQuery && missing.length > 0));
  const scope: SuggestedEpisodeScope = {
    sessionId: "",
    startTime: null,
    endTime: null,
    subjects: [...(missing.length > 0 ? missing : input.subjects)],
  };
  if (range) {
    scope.startTime = range.start;
    scope.endTime = range.end;
  } else if (preferSession) {
    scope.sessionId = input.sessionId;
  } else {
    const today = startOfDay(input.reference);
    scope.startTime = addDays(today, -DEFAULT_LOOKBACK_DAYS);
    scope.endTime = addDays(today, 1);
  }
  return { reason, scope };
}

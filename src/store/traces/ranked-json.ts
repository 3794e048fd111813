import type { RecalledBelief } from "../../domain/model.js";

/**
 * A trace's ranked list as JSON text: exactly JSON.stringify(ranked), written
 * out field by field. Built after every recall for 40-240 items, and most of
 * JSON.stringify's work went to what it redoes for every item: each key, and
 * the texts of the few values that recur (types, lifecycles, bands, arms) and
 * of the belief's dates, which are made once here and kept. An in-turn list
 * of 60 took about 80 µs with JSON.stringify and 55 µs like this, a cold
 * snapshot's 240 about 300 and 230 µs (microbenchmark); the bytes are the
 * same (test/unit/ranked-json.test.ts). A belief's own strings (id, subject,
 * statement) are not kept: the embedded 50k principal's overflowed a table
 * of 65,536, and its restarts cost more than it saved (0.25 ms a call,
 * profiled).
 */
export function rankedJson(ranked: readonly RecalledBelief[]): string {
  let out = "[";
  for (let i = 0; i < ranked.length; i++) {
    const b = ranked[i]!;
    if (i > 0) out += ",";
    out +=
      `{"beliefId":${JSON.stringify(b.beliefId)},"subject":${JSON.stringify(b.subject)},"statement":${JSON.stringify(b.statement)}` +
      `,"beliefType":${recurring(b.beliefType)},"status":${recurring(b.status)},"confidenceBand":${recurring(b.confidenceBand)}` +
      `,"authority":${recurring(b.authority)},"originScope":${recurring(b.originScope)},"portability":${recurring(b.portability)}` +
      `,"carried":${b.carried},"validFrom":${isoJson(b.validFrom)},"validTo":${b.validTo === null ? "null" : isoJson(b.validTo)}` +
      `,"score":${JSON.stringify(b.score)},"arms":${recurringList(b.arms)},"conflictWith":${b.conflictWith.length === 0 ? "[]" : JSON.stringify(b.conflictWith)}` +
      `,"blocked":${b.blocked}}`;
  }
  return out + "]";
}

/**
 * The fields written above, in their order. A field added to RecalledBelief
 * fails to compile here until it is listed, and the ranked-json test fails
 * until rankedJson writes what is listed: it cannot go missing from every
 * stored trace unnoticed.
 */
export const RANKED_FIELDS = [
  "beliefId",
  "subject",
  "statement",
  "beliefType",
  "status",
  "confidenceBand",
  "authority",
  "originScope",
  "portability",
  "carried",
  "validFrom",
  "validTo",
  "score",
  "arms",
  "conflictWith",
  "blocked",
] as const satisfies readonly (keyof RecalledBelief)[];
type Unwritten = Exclude<keyof RecalledBelief, (typeof RANKED_FIELDS)[number]>;
const everyFieldWritten: [Unwritten] extends [never] ? true : never = true;
void everyFieldWritten;

/** The JSON texts of the first RECURRING_KEPT distinct short values seen (a handful of types, lifecycles, scopes, arms). */
const RECURRING = new Map<string, string>();
const RECURRING_KEPT = 1_024;

function recurring(value: string): string {
  let text = RECURRING.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (RECURRING.size < RECURRING_KEPT) RECURRING.set(value, text);
  }
  return text;
}

function recurringList(values: readonly string[]): string {
  if (values.length === 0) return "[]";
  let text = "[";
  for (let i = 0; i < values.length; i++) text += (i > 0 ? "," : "") + recurring(values[i]!);
  return text + "]";
}

/**
 * The ISO texts of the dates written lately, by epoch ms. Not by Date object: the principal index
 * makes a row's Dates anew each time the row leaves its hot rows and comes back (hot-rows.ts), and
 * a WeakMap entry per new Date cost about 4 µs (its insertion and the collector's ephemeron work)
 * where a lookup by time costs 0.1 (microbenchmark). Cleared when full: 16,384 is the distinct
 * validity times of a 10k principal's recalled rows with room to spare, about 1.5 MiB.
 */
const ISO_JSON = new Map<number, string>();
const ISO_JSON_KEPT = 16_384;

/**
 * What JSON.stringify writes for `date`: its ISO text quoted (Date.prototype.toJSON), null when
 * invalid.
 */
function isoJson(date: Date): string {
  const ms = date.getTime();
  let text = ISO_JSON.get(ms);
  if (text === undefined) {
    text = Number.isFinite(ms) ? `"${date.toISOString()}"` : "null";
    if (ISO_JSON.size >= ISO_JSON_KEPT) ISO_JSON.clear();
    ISO_JSON.set(ms, text);
  }
  return text;
}

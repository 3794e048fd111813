import type { SafetyFinding } from "../domain/safety-finding.js";
import { lowerCased } from "../domain/string-memo.js";

/**
 * What recall works out from one belief row alone, whatever the query: its
 * content words (near-duplicates), its normalised statement (collapse's
 * restatements), its lower-cased subject, and its safety finding. The
 * principal index keeps one with each row it holds (a replaced row comes with
 * a new one) and hands it out with the row's candidates, so recall after
 * recall reads these where it looked each up in a table of every statement
 * seen: about 570 lookups an in-turn recall of the bench's 10k principal,
 * 3.5% of the sidecar's busy time in a CPU profile. A candidate without one
 * (the SQL source's rows are read anew each call) uses those tables.
 * Each field is filled the first time a recall needs it; every value is a
 * pure function of the row, the same whichever recall filled it.
 */
export class RowMemo {
  // Every field is there from the start, so every memo has one shape (filled in any order, it keeps it).
  contentWords: ReadonlySet<string> | undefined = undefined;
  normalisedStatement: string | undefined = undefined;
  lowerSubject: string | undefined = undefined;
  /** Undefined until scanned; null when the statement may be rendered. */
  finding: SafetyFinding | null | undefined = undefined;
  /**
   * The holder's one copy of a string equal to `value` (the principal index's
   * vocabulary), for the words a memo keeps: thousands of rows hold the same
   * content words. Absent: a memo keeps the strings as computed.
   */
  shared: ((value: string) => string) | undefined = undefined;
}

/** A candidate that may carry its row's memo. */
export interface WithRowMemo {
  memo?: RowMemo | undefined;
}

/** The candidate's subject, lower-cased. */
export function lowerSubjectOf(c: WithRowMemo & { subject: string }): string {
  const memo = c.memo;
  return memo ? (memo.lowerSubject ??= c.subject.toLowerCase()) : lowerCased(c.subject);
}

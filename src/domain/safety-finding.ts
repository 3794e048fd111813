/**
 * What the safety scan (recall/safety/) says of a statement, as a value:
 * the principal index keeps one with each row it holds (ports/row-memo.ts),
 * so the type lives below both.
 */

export type SafetyReason = "injection" | "secret" | "private";
export type SafetyVerdict = { ok: true } | { ok: false; reason: SafetyReason };

/** Why a statement is withheld: the reason and the rule family that fired ("role", "stripe", "encoded/turn", a ruleset rule id). */
export interface SafetyFinding {
  reason: SafetyReason;
  rule: string;
}

import type { Correction } from "../../domain/model.js";
import { formatAsOf } from "../render/render.js";
import { EIGHT_DIGITS, type ShortIds } from "../render/short-ids.js";

/**
 * The recall delta: the snapshot is frozen for the session, so a belief in
 * it that stops holding is corrected in the user turn instead, by an exact
 * line that leads the in-turn block and is never dropped for budget:
 *
 *   correction: [m:8f21a0c3] no longer holds as of 2026-07-24T00:00:00Z; superseded by [m:9d02b117].
 *
 * Its ids are the whole rendered text's (render/short-ids.ts): a successor
 * that shares eight digits with the belief it replaces is cited longer.
 */
export function correctionLine(c: Correction, ids: ShortIds = EIGHT_DIGITS): string {
  const successor = c.supersededBy ? `; superseded by [${ids(c.supersededBy)}]` : "";
  return `correction: [${ids(c.beliefId)}] no longer holds as of ${formatAsOf(c.noLongerHoldsAsOf)}${successor}.`;
}

/** The ids a correction line names. */
export function correctionIds(corrections: readonly Correction[]): string[] {
  return corrections.flatMap((c) => (c.supersededBy ? [c.beliefId, c.supersededBy] : [c.beliefId]));
}

/** Corrections in a stable order, each on its own line, ahead of the block. */
export function renderCorrections(corrections: readonly Correction[], ids: ShortIds = EIGHT_DIGITS): string {
  return [...corrections]
    .sort((a, b) => (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0))
    .map((c) => `${correctionLine(c, ids)}\n`)
    .join("");
}

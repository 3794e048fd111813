import type { Correction } from "../../domain/model.js";
import { formatAsOf, shortId } from "../render/render.js";

/**
 * The recall delta: the snapshot is frozen for the session, so a belief in
 * it that stops holding is corrected in the user turn instead, by an exact
 * line that leads the in-turn block and is never dropped for budget:
 *
 *   correction: [m:8f21a0c3] no longer holds as of 2026-07-24T00:00:00Z; superseded by [m:9d02b117].
 */
export function correctionLine(c: Correction): string {
  const successor = c.supersededBy ? `; superseded by [${shortId(c.supersededBy)}]` : "";
  return `correction: [${shortId(c.beliefId)}] no longer holds as of ${formatAsOf(c.noLongerHoldsAsOf)}${successor}.`;
}

/** Corrections in a stable order, each on its own line, ahead of the block. */
export function renderCorrections(corrections: readonly Correction[]): string {
  return [...corrections]
    .sort((a, b) => (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0))
    .map((c) => `${correctionLine(c)}\n`)
    .join("");
}

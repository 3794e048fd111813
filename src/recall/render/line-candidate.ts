import type { RankedCandidate } from "../rank/ranked-candidate.js";
import { renderLine, type RenderLine } from "./render.js";

/**
 * A collapsed candidate as assembly weighs it: its belief, its ranking, and
 * the line it would render as. The line's text is made the first time
 * assembly reads it, and only then (a snapshot weighs about 40 of 240
 * candidates). A class, so that the laziness lives on the prototype: an
 * object literal's getter was a closure and a context made for every
 * candidate of every recall, and the old generation's garbage holds closures
 * and contexts by the thousands (ADR 0001, tenth follow-up).
 */
export class LineCandidate {
  readonly beliefId: string;
  readonly beliefType: string;
  readonly score: number;
  private text: string | undefined = undefined;

  constructor(
    readonly belief: RankedCandidate,
    readonly conflictsWith: readonly string[],
    readonly renderLine: RenderLine,
  ) {
    this.beliefId = belief.beliefId;
    this.beliefType = belief.beliefType;
    this.score = belief.score;
  }

  get line(): string {
    return (this.text ??= renderLine(this.renderLine));
  }
}

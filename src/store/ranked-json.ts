import type { RecalledBelief } from "../domain/model.js";

/**
 * A trace's ranked list as JSON text: what JSON.stringify(ranked) writes
 * for items built as pipeline.ts builds them (that key order), byte for
 * byte. It was the largest part of writing a trace (0.22 ms of sidecar CPU
 * per in-turn recall, ~60 items, mostly escaping the same statements and
 * formatting the same dates again), and most of an item is its belief's: the
 * JSON of those fields is kept per belief while every one of them is the
 * same, and an item writes only the recall's own (band, carried, score,
 * arms, conflicts, blocked).
 */
export function rankedJson(ranked: readonly RecalledBelief[]): string {
  let text = "[";
  for (let i = 0; i < ranked.length; i++) {
    if (i > 0) text += ",";
    text += itemJson(ranked[i]!);
  }
  return text + "]";
}

/** The JSON of an item's belief fields, in the text's order, around the recall's own. */
interface BeliefJson {
  readonly item: RecalledBelief;
  /** `{"beliefId":…,"subject":…,"statement":` */
  readonly head: string;
  readonly statement: string;
  /** `,"beliefType":…,"status":…,"confidenceBand":` */
  readonly kind: string;
  /** `,"authority":…,"originScope":…,"portability":…,"carried":` */
  readonly origin: string;
  /** `,"validFrom":…,"validTo":…,"score":` */
  readonly validity: string;
}

/** Beliefs whose JSON is kept: a few heavy principals' ranked lists. Cleared when full. */
const MAX_KEPT = 20_000;
const KEPT = new Map<string, BeliefJson>();

function itemJson(b: RecalledBelief): string {
  let kept = KEPT.get(b.beliefId);
  if (kept === undefined || !sameBelief(kept.item, b)) {
    if (KEPT.size >= MAX_KEPT) KEPT.clear();
    kept = beliefJson(b);
    KEPT.set(b.beliefId, kept);
  }
  // A blocked item's statement is empty (pipeline.ts), whatever its belief says.
  const statement = b.statement === kept.item.statement ? kept.statement : JSON.stringify(b.statement);
  return (
    kept.head + statement + kept.kind + JSON.stringify(b.confidenceBand) + kept.origin + (b.carried ? "true" : "false") + kept.validity +
    JSON.stringify(b.score) + ',"arms":' + JSON.stringify(b.arms) + ',"conflictWith":' + JSON.stringify(b.conflictWith) +
    ',"blocked":' + (b.blocked ? "true" : "false") + "}"
  );
}

function beliefJson(b: RecalledBelief): BeliefJson {
  const j = JSON.stringify;
  return {
    item: b,
    head: `{"beliefId":${j(b.beliefId)},"subject":${j(b.subject)},"statement":`,
    statement: j(b.statement),
    kind: `,"beliefType":${j(b.beliefType)},"status":${j(b.status)},"confidenceBand":`,
    origin: `,"authority":${j(b.authority)},"originScope":${j(b.originScope)},"portability":${j(b.portability)},"carried":`,
    validity: `,"validFrom":${j(b.validFrom)},"validTo":${j(b.validTo)},"score":`,
  };
}

/** The fields kept text is made of; the statement is compared where it is written. */
function sameBelief(a: RecalledBelief, b: RecalledBelief): boolean {
  return (
    a.subject === b.subject &&
    a.beliefType === b.beliefType &&
    a.status === b.status &&
    a.authority === b.authority &&
    a.originScope === b.originScope &&
    a.portability === b.portability &&
    sameTime(a.validFrom, b.validFrom) &&
    sameTime(a.validTo, b.validTo)
  );
}

/** Equal as JSON writes them: the same instant, or both invalid, or both null. */
function sameTime(a: Date | null, b: Date | null): boolean {
  if (a === null || b === null) return a === b;
  return Object.is(a.getTime(), b.getTime());
}

import { InvalidArgumentError, type FieldProblem } from "../../domain/errors.js";
import { hexOf, resolveShortId, SHORT_ID_DIGITS } from "../../domain/short-id.js";

/**
 * The write path's side of the block's short ids (`[m:8f21a0c3]`, longer
 * where two ids of a block share eight digits): citations may name a belief
 * by its short id, and PutBeliefs warns about ids whose short id is taken.
 */

/** A cited id as validation keeps a short id: "m:" and lowercase hex. */
export function isShortId(id: string): boolean {
  return id.startsWith("m:");
}

/**
 * RecordCitations' ids, each short one replaced by the one returned id it
 * starts. A block never gives two of its beliefs the same short id, so one
 * naming none or several is not from this trace's block; every such entry is
 * reported in one error.
 */
export function resolveCitedIds(cited: readonly string[], returned: readonly string[]): string[] {
  const problems: FieldProblem[] = [];
  const ids = cited.map((id, i) => {
    if (!isShortId(id)) return id;
    const named = resolveShortId(id, returned);
    const field = `belief_ids[${i}]`;
    if (named.length === 0) problems.push({ field, problem: "was not returned by this trace" });
    if (named.length > 1) problems.push({ field, problem: `names ${named.length} beliefs of this trace: cite the id as its block shows it` });
    return named[0] ?? id;
  });
  if (problems.length > 0) throw InvalidArgumentError.of(problems);
  return ids;
}

/**
 * PutBeliefsResponse.warnings for ids whose eight-digit short id
 * (`[m:8f21a0c3]`) another belief already has: one of the principal's
 * (`stored`, from the store) or an earlier one of the same request. Nothing
 * is refused: a block showing both cites them by longer ids. The warning
 * says so, because such ids usually come from a time- or counter-based
 * generator that will keep colliding.
 */
export function shortIdWarnings(beliefIds: readonly string[], stored: ReadonlyMap<string, readonly string[]>): string[] {
  const firstWithPrefix = new Map<string, string>();
  const warnings: string[] = [];
  beliefIds.forEach((id, i) => {
    const prefix = hexOf(id).slice(0, SHORT_ID_DIGITS);
    const earlier = firstWithPrefix.get(prefix);
    const others = [...new Set([...(earlier === undefined ? [] : [earlier]), ...(stored.get(id) ?? [])])].filter((o) => o !== id);
    if (earlier === undefined) firstWithPrefix.set(prefix, id);
    if (others.length === 0) return;
    const named = others.length > 3 ? `${others.slice(0, 3).join(", ")} and ${others.length - 3} more` : others.join(", ");
    warnings.push(
      `beliefs[${i}].belief_id: shares its first eight hex digits (${prefix}) with ${named}; ` +
        "a block showing both cites them by longer ids (random UUID v4 ids avoid this)",
    );
  });
  return warnings;
}

import { hexOf, SHORT_ID_DIGITS } from "../../domain/short-id.js";

/**
 * The short ids a block cites beliefs by: `[m:8f21a0c3]`, the first eight
 * hex digits of the UUID. Two different beliefs that share those eight
 * digits would read as one ("[m:aaaaaaaa] superseded by [m:aaaaaaaa]"), so
 * within one block each id gets the shortest prefix of at least eight digits
 * that no other id of the block shares. Only the ids that collide grow: a
 * block without a collision is byte-identical to one rendered before this
 * rule, and no short id is ever a prefix of another in the same block.
 * Pure: the same ids give the same prefixes, whatever their order.
 */


/** A block's short ids: `m:` and the hex prefix, for the ids it was made for (eight digits for any other). */
export interface ShortIds {
  (beliefId: string): string;
  /** True when some id of the block needed more than eight digits. */
  readonly lengthened: boolean;
}

/** Eight digits, as every block without a collision cites. */
export function shortId(beliefId: string): string {
  return `m:${hexOf(beliefId).slice(0, SHORT_ID_DIGITS)}`;
}

/** Eight-digit ids for any block: the renderer's default. */
export const EIGHT_DIGITS: ShortIds = Object.assign((beliefId: string) => shortId(beliefId), { lengthened: false });

/** The digit count each colliding id needs among `ids`; ids that need only eight are left out. */
export function collidingLengths(ids: Iterable<string>): Map<string, number> {
  const hexes = [...new Set([...ids].map(hexOf))].sort();
  const lengths = new Map<string, number>();
  // Sorted, an id's longest common prefix with any other is with a neighbour.
  for (let i = 0; i + 1 < hexes.length; i++) {
    const a = hexes[i]!;
    const b = hexes[i + 1]!;
    let common = 0;
    while (common < a.length && a[common] === b[common]) common++;
    if (common < SHORT_ID_DIGITS) continue;
    const need = Math.min(common + 1, a.length);
    lengths.set(a, Math.max(lengths.get(a) ?? 0, need));
    lengths.set(b, Math.max(lengths.get(b) ?? 0, need));
  }
  return lengths;
}

/** The short ids of a block whose lines name `ids` (its beliefs, their conflict partners, its corrections). */
export function shortIdsFor(ids: Iterable<string>): ShortIds {
  const lengths = collidingLengths(ids);
  if (lengths.size === 0) return EIGHT_DIGITS;
  const cite = (beliefId: string) => {
    const hex = hexOf(beliefId);
    return `m:${hex.slice(0, lengths.get(hex) ?? SHORT_ID_DIGITS)}`;
  };
  return Object.assign(cite, { lengthened: true });
}

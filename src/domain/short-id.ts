/**
 * A block's short ids as a reader of the block meets them: `[m:8f21a0c3]`,
 * at least eight hex digits of a belief's UUID (more where two beliefs of one
 * block share the first eight; see recall/render/short-ids.ts). Parsing them
 * back to full ids is the citation join: what the model cited, in a recall's
 * returned ids.
 */

export const SHORT_ID_DIGITS = 8;

/** The 32 lowercase hex digits of a UUID. */
export function hexOf(beliefId: string): string {
  return beliefId.replace(/-/g, "").toLowerCase();
}

/** Every `[m:…]` a text cites (a model's answer, a block), as lowercase hex prefixes, in order of first appearance. */
export function citedPrefixes(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\[m:([0-9a-fA-F]{8,32})\]/g)) {
    const prefix = m[1]!.toLowerCase();
    if (!out.includes(prefix)) out.push(prefix);
  }
  return out;
}

/**
 * The full ids among `candidates` (a recall's returned ids) that `prefix`
 * names: exactly one for a short id of that recall's block. A block never
 * gives two of its beliefs the same short id, so more than one means the
 * prefix is not from that block.
 */
export function resolveShortId(prefix: string, candidates: readonly string[]): string[] {
  const hex = prefix.replace(/^\[?m:/, "").replace(/\]$/, "").toLowerCase();
  return candidates.filter((id) => hexOf(id).startsWith(hex));
}

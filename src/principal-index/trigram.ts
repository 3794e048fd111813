/**
 * pg_trgm's similarity(), in process, for misspelt-name resolution: words
 * are runs of letters and digits, each padded with two spaces before and
 * one after; similarity is shared trigrams over the union (pg_trgm's
 * DIVUNION), computed in float4 as pg_trgm does.
 */
export function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = [" ", " ", ...word, " "];
    for (let i = 0; i + 3 <= chars.length; i += 1) out.add(chars[i]! + chars[i + 1]! + chars[i + 2]!);
  }
  return out;
}

export function similarity(a: string, b: string): number {
  const ta = trigrams(a);
  const tb = trigrams(b);
  if (ta.size === 0 || tb.size === 0) return 0;
  let shared = 0;
  for (const t of ta) if (tb.has(t)) shared += 1;
  return Math.fround(shared / (ta.size + tb.size - shared));
}

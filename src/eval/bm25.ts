import { FUNCTION_WORDS } from "../recall/query-former.js";

/**
 * A plain BM25 (k1 = 1.2, b = 0.75) over subject + statement, document
 * frequencies from the same documents: the baseline the pipeline is compared
 * with in the same run. Lower-cased words, function words removed, no stemming.
 */
export class Bm25Index {
  private readonly docs: { id: string; terms: Map<string, number>; length: number }[] = [];
  private readonly df = new Map<string, number>();

  constructor(
    documents: readonly { id: string; text: string }[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    for (const d of documents) {
      const terms = new Map<string, number>();
      const words = tokens(d.text);
      for (const w of words) terms.set(w, (terms.get(w) ?? 0) + 1);
      for (const w of terms.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      this.docs.push({ id: d.id, terms, length: words.length });
    }
  }

  search(query: string, k: number): string[] {
    const n = this.docs.length;
    const avg = this.docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, n);
    const q = [...new Set(tokens(query))];
    const scored = this.docs
      .map((d) => {
        let s = 0;
        for (const t of q) {
          const tf = d.terms.get(t);
          if (!tf) continue;
          const df = this.df.get(t) ?? 0;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          s += (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * d.length) / avg));
        }
        return { id: d.id, s };
      })
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1));
    return scored.slice(0, k).map((x) => x.id);
  }
}

function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !FUNCTION_WORDS.has(w));
}

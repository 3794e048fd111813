import type { IndexedBelief } from "./loading.js";

/**
 * The inverted index of one principal: lexeme → the beliefs whose lexical
 * document holds it, plus the collection totals BM25 normalises by (all of
 * the principal's beliefs, as principal_lexicon counts them).
 */
export class Postings {
  private readonly byLexeme = new Map<string, Set<IndexedBelief>>();
  /** Documents and occurrences per weight label A-D over every belief of the principal. */
  readonly totals = { docs: 0, lengths: [0, 0, 0, 0] };

  add(b: IndexedBelief): void {
    for (const t of b.terms) {
      let list = this.byLexeme.get(t.lexeme);
      if (!list) this.byLexeme.set(t.lexeme, (list = new Set()));
      list.add(b);
    }
    this.count(b, 1);
  }

  remove(b: IndexedBelief): void {
    for (const t of b.terms) {
      const list = this.byLexeme.get(t.lexeme);
      list?.delete(b);
      if (list?.size === 0) this.byLexeme.delete(t.lexeme);
    }
    this.count(b, -1);
  }

  get(lexeme: string): ReadonlySet<IndexedBelief> | undefined {
    return this.byLexeme.get(lexeme);
  }

  private count(b: IndexedBelief, sign: 1 | -1): void {
    this.totals.docs += sign;
    b.lengths.forEach((n, i) => (this.totals.lengths[i]! += sign * n));
  }
}

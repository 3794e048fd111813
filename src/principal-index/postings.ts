import type { IndexedBelief } from "./loading.js";

/**
 * The inverted index of one principal: lexeme → the ordinals of the beliefs
 * whose lexical document holds it, plus the collection totals BM25
 * normalises by (all of the principal's beliefs, as principal_lexicon
 * counts them).
 */
export class Postings {
  /** Arrays of small integers, not sets of objects: scoring walks them on every recall. Order is of no meaning. */
  private readonly byLexeme = new Map<string, number[]>();
  /** Documents and occurrences per weight label A-D over every belief of the principal. */
  readonly totals = { docs: 0, lengths: [0, 0, 0, 0] };

  add(b: IndexedBelief): void {
    for (const t of b.terms) {
      let list = this.byLexeme.get(t.lexeme);
      if (!list) this.byLexeme.set(t.lexeme, (list = []));
      list.push(b.ord);
    }
    this.count(b, 1);
  }

  remove(b: IndexedBelief): void {
    for (const t of b.terms) {
      const list = this.byLexeme.get(t.lexeme);
      if (!list) continue;
      const at = list.indexOf(b.ord);
      if (at >= 0) {
        list[at] = list[list.length - 1]!;
        list.pop();
      }
      if (list.length === 0) this.byLexeme.delete(t.lexeme);
    }
    this.count(b, -1);
  }

  get(lexeme: string): readonly number[] | undefined {
    return this.byLexeme.get(lexeme);
  }

  private count(b: IndexedBelief, sign: 1 | -1): void {
    this.totals.docs += sign;
    b.lengths.forEach((n, i) => (this.totals.lengths[i]! += sign * n));
  }
}

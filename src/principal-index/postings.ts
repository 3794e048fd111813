import type { BeliefTable } from "./belief-table.js";
import { OrdLists } from "./ord-lists.js";
import type { TsEntry } from "./tsvector.js";

/**
 * The inverted index of one principal: lexeme → the ordinals of the beliefs
 * whose lexical document holds it (OrdLists: Int32Arrays, which scoring
 * walks on every recall), plus the collection totals BM25 normalises by (all
 * of the principal's beliefs, as principal_lexicon counts them).
 */
export class Postings {
  private readonly byLexeme = new OrdLists<string>();
  /** Documents and occurrences per weight label A-D over every belief of the principal. */
  readonly totals = { docs: 0, lengths: [0, 0, 0, 0] };

  add(o: number, terms: readonly TsEntry[], lengths: readonly number[]): void {
    for (const t of terms) this.byLexeme.add(t.lexeme, o);
    this.totals.docs += 1;
    for (let i = 0; i < 4; i++) this.totals.lengths[i]! += lengths[i]!;
  }

  /** Row `o` as the table holds it now (before its replacement is written). */
  remove(o: number, table: BeliefTable): void {
    table.eachTerm(o, (lexeme) => this.byLexeme.remove(lexeme, o));
    this.totals.docs -= 1;
    for (let i = 0; i < 4; i++) this.totals.lengths[i]! -= table.length(o, i);
  }

  get(lexeme: string): Int32Array | undefined {
    return this.byLexeme.get(lexeme);
  }

  get bytes(): number {
    return this.byLexeme.bytes;
  }
}

import type { Principal } from "../../domain/model.js";
import type { SqlClient } from "../sql-client.js";

/**
 * BM25's per-principal statistics (principal_lexicon: the number of beliefs
 * and their summed lex_lengths per field label, sql/0005_lexicon.sql), kept
 * exact in the write transaction that changes them. No trigger: a table
 * distributed by tenant_id (Citus) cannot carry the statement-level triggers
 * with transition tables this once was (docs/adr/0006-lexicon-statistics-without-triggers-and-pooler-support.md).
 *
 * Every statement that inserts a belief or changes its lexical document
 * returns the row's lex_lengths before and after (columns `lengths_before`
 * and `lengths_after`, int[]); the write adds them up here and applies the sum once, at the end
 * of its transaction. Writes of one principal are serialised by the head row
 * lock (memory-store.ts beginWrite), so the sum is applied to counts no other
 * writer is changing. Only utility and feedback columns are written outside
 * that lock, and they are not part of the document.
 */
export class LexiconDelta {
  private docs = 0;
  private readonly lengths = [0, 0, 0, 0];

  /** One row's lengths before (null: it did not exist) and after (null: it is gone) the statement. */
  change(before: readonly number[] | null, after: readonly number[] | null): void {
    if (before) this.add(before, -1);
    if (after) this.add(after, 1);
  }

  /** Rows returned by a statement that selected `lengths_before` and `lengths_after`. */
  changeRows(rows: readonly { lengths_before?: unknown; lengths_after?: unknown }[]): void {
    for (const r of rows) this.change(lengthsOf(r.lengths_before), lengthsOf(r.lengths_after));
  }

  /** Adds the sum to the principal's counts; nothing when it is zero. */
  async apply(tx: SqlClient, p: Principal): Promise<void> {
    if (this.docs === 0 && this.lengths.every((n) => n === 0)) return;
    await tx.query(
      `INSERT INTO principal_lexicon AS l (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (tenant_id, principal_id) DO UPDATE SET
         docs = l.docs + EXCLUDED.docs, len_a = l.len_a + EXCLUDED.len_a, len_b = l.len_b + EXCLUDED.len_b,
         len_c = l.len_c + EXCLUDED.len_c, len_d = l.len_d + EXCLUDED.len_d`,
      [p.tenantId, p.principalId, this.docs, ...this.lengths],
    );
    this.docs = 0;
    this.lengths.fill(0);
  }

  private add(lengths: readonly number[], sign: 1 | -1): void {
    this.docs += sign;
    for (let i = 0; i < 4; i++) this.lengths[i]! += sign * Number(lengths[i] ?? 0);
  }
}

function lengthsOf(value: unknown): number[] | null {
  return Array.isArray(value) ? value.map(Number) : null;
}


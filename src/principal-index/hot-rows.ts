import type { StoredBelief } from "../domain/model.js";
import type { ArmCandidate } from "../ports/candidate-source.js";
import { RowMemo } from "../ports/row-memo.js";
import type { BeliefTable } from "./belief-table.js";

/**
 * The rows an index returned lately, as objects: the table holds none
 * (belief-table.ts), so a row an arm returns is made a StoredBelief, and
 * kept here with its memo (ports/row-memo.ts) so the next recalls that
 * return it read the same object and reuse what recall worked out from it.
 * A bounded number, first in first out; a replaced row is forgotten.
 */
export class HotRows {
  private readonly rows = new Map<number, { belief: StoredBelief; memo: RowMemo }>();

  constructor(
    private readonly table: BeliefTable,
    private readonly max = HOT_ROWS,
  ) {}

  candidate(o: number, armScore: number): ArmCandidate {
    const row = this.get(o);
    return { belief: row.belief, armScore, memo: row.memo };
  }

  get(o: number): { belief: StoredBelief; memo: RowMemo } {
    let row = this.rows.get(o);
    if (row === undefined) {
      if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value!);
      const belief = this.table.belief(o);
      const memo = new RowMemo();
      memo.shared = this.table.shared;
      memo.lowerSubject = this.table.shared(belief.subject.toLowerCase());
      this.rows.set(o, (row = { belief, memo }));
    }
    return row;
  }

  forget(o: number): void {
    this.rows.delete(o);
  }

  get size(): number {
    return this.rows.size;
  }
}

/**
 * Rows kept as objects per index: a snapshot's structured arm returns a few
 * hundred, an in-turn recall fewer. About 1 KiB each with its memo filled.
 */
export const HOT_ROWS = 4096;

/** Bytes a full HotRows holds, for the index's byte bound. */
export const HOT_ROW_BYTES = 1024;

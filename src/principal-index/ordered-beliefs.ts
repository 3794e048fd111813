import type { IndexedBelief } from "./loading.js";

/**
 * The index's beliefs kept in one fixed order (the delta arm's newest first,
 * the structured arm's authority order), so an arm reads them in order
 * instead of sorting thousands per recall. A small delta moves its rows into
 * place; a large one, or the load, has the order rebuilt on first use.
 * `ranked()` writes each belief's place in the order to it (IndexedBelief.rank),
 * so an arm compares two numbers where the order compares four fields.
 */
export class OrderedBeliefs {
  private list: IndexedBelief[] | null = null;
  private ords: Int32Array | null = null;
  private ranksCurrent = false;

  constructor(
    private readonly all: () => Iterable<IndexedBelief>,
    private readonly order: (a: IndexedBelief, b: IndexedBelief) => number,
  ) {}

  /** Every belief, in order. */
  get ordered(): readonly IndexedBelief[] {
    return (this.list ??= [...this.all()].sort(this.order));
  }

  /** Every belief's ordinal (IndexedBelief.ord), in order: for walks that read the columns, not the beliefs. */
  ordinals(): Int32Array {
    return (this.ords ??= Int32Array.from(this.ordered, (ib) => ib.ord));
  }

  /** Makes every belief's `rank` its place in this order (0 is first). One order per index may use it. */
  ranked(): void {
    if (this.ranksCurrent) return;
    this.ordered.forEach((ib, i) => (ib.rank = i));
    this.ranksCurrent = true;
  }

  /** `next` replaces `old` (or is new), as one of a delta of `batch` rows. */
  place(next: IndexedBelief, old: IndexedBelief | undefined, batch: number): void {
    this.ranksCurrent = false;
    this.ords = null;
    const list = this.list;
    if (list === null) return;
    if (batch > 64) {
      this.list = null;
      return;
    }
    if (old) list.splice(list.indexOf(old), 1);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.order(list[mid]!, next) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, next);
  }
}

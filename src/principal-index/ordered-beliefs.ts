/**
 * The index's beliefs, by ordinal, kept in one fixed order (the delta arm's
 * newest first, the structured arm's authority order), so an arm reads them
 * in order instead of sorting thousands per recall. A small delta moves its
 * rows into place; a large one, or the load, has the order rebuilt on first
 * use. `ranked()` writes each belief's place in the order to `rank`, so an
 * arm compares two numbers where the order compares four fields.
 */
export class OrderedBeliefs {
  private list: number[] | null = null;
  private ords: Int32Array | null = null;
  private ranksCurrent = false;

  constructor(
    /** How many beliefs there are: ordinals 0 … count - 1. */
    private readonly count: () => number,
    private readonly order: (a: number, b: number) => number,
  ) {}

  /** Every ordinal, in order. */
  get ordered(): readonly number[] {
    return (this.list ??= Array.from({ length: this.count() }, (_, o) => o).sort(this.order));
  }

  /** The same as one Int32Array, for walks over the columns. */
  ordinals(): Int32Array {
    return (this.ords ??= Int32Array.from(this.ordered));
  }

  /** Makes rank[o] every belief's place in this order (0 is first). One order per index may use it. */
  ranked(rank: Int32Array): void {
    if (this.ranksCurrent) return;
    this.ordered.forEach((o, i) => (rank[o] = i));
    this.ranksCurrent = true;
  }

  /** Belief `o` was written (`replaced`: it was held before), as one of a delta of `batch` rows. */
  place(o: number, replaced: boolean, batch: number): void {
    this.ranksCurrent = false;
    this.ords = null;
    const list = this.list;
    if (list === null) return;
    if (batch > 64) {
      this.list = null;
      return;
    }
    if (replaced) list.splice(list.indexOf(o), 1);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.order(list[mid]!, o) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, o);
  }
}

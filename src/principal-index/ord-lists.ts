/**
 * Lists of belief ordinals by key (a lexeme, an interned subject or type):
 * each an Int32Array with a length, grown by half, so a list of thousands is
 * one object of 4 bytes an entry, where a JavaScript array of numbers or a
 * Set of beliefs took 8 to 40. Order is of no meaning: a removal moves the
 * last entry into the gap.
 */
export class OrdLists<K> {
  private readonly lists = new Map<K, OrdList>();
  /** See `bytes`; kept as lists grow and go, not summed when read. */
  private held = 0;

  add(key: K, ord: number): void {
    let list = this.lists.get(key);
    if (!list) {
      this.lists.set(key, (list = { ords: new Int32Array(2), length: 0 }));
      this.held += PER_KEY + list.ords.byteLength;
    }
    if (list.length === list.ords.length) {
      const next = new Int32Array(Math.max(4, Math.ceil(list.length * 1.5)));
      next.set(list.ords);
      this.held += next.byteLength - list.ords.byteLength;
      list.ords = next;
    }
    list.ords[list.length++] = ord;
  }

  remove(key: K, ord: number): void {
    const list = this.lists.get(key);
    if (!list) return;
    const at = list.ords.subarray(0, list.length).indexOf(ord);
    if (at < 0) return;
    list.ords[at] = list.ords[list.length - 1]!;
    list.length -= 1;
    if (list.length === 0) {
      this.lists.delete(key);
      this.held -= PER_KEY + list.ords.byteLength;
    }
  }

  /** The ordinals under `key` (a view: read it before the next change). */
  get(key: K): Int32Array | undefined {
    const list = this.lists.get(key);
    return list ? list.ords.subarray(0, list.length) : undefined;
  }

  has(key: K): boolean {
    return this.lists.has(key);
  }

  keys(): IterableIterator<K> {
    return this.lists.keys();
  }

  /** Bytes held: the arrays' capacity and the list, array and map entry of each key. */
  get bytes(): number {
    return this.held;
  }
}

/** A list object, its Int32Array's header and its map entry. */
const PER_KEY = 160;

interface OrdList {
  ords: Int32Array;
  length: number;
}

/**
 * Answers of a pure function of two strings, kept because recall after
 * recall asks it of the same strings (hundreds of candidates each, from one
 * principal's beliefs). Keyed by the strings themselves, one map inside
 * another: an index hands every recall the same string objects, whose hashes
 * are already known, where a joined key would be built and hashed anew each
 * time. At most `max` answers (a few MiB); when full, it starts over.
 */
export class StringPairMemo<V> {
  private readonly byFirst = new Map<string, Map<string, V>>();
  private size = 0;

  constructor(private readonly max: number) {}

  get(first: string, second: string): V | undefined {
    return this.byFirst.get(first)?.get(second);
  }

  set(first: string, second: string, value: V): void {
    if (this.size >= this.max) {
      this.byFirst.clear();
      this.size = 0;
    }
    let bySecond = this.byFirst.get(first);
    if (!bySecond) this.byFirst.set(first, (bySecond = new Map()));
    if (!bySecond.has(second)) this.size += 1;
    bySecond.set(second, value);
  }
}

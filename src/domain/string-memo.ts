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

/** The one-string form of StringPairMemo: the same reasons, the same bound. */
export class StringMemo<V> {
  private readonly answers = new Map<string, V>();

  constructor(private readonly max: number) {}

  /** The memoized `compute(key)`. */
  of(key: string, compute: (key: string) => V): V {
    let value = this.answers.get(key);
    if (value === undefined) {
      if (this.answers.size >= this.max) this.answers.clear();
      value = compute(key);
      this.answers.set(key, value);
    }
    return value;
  }
}

/** `text.toLowerCase()`, memoized: subjects are lower-cased for every candidate of every recall. */
export function lowerCased(text: string): string {
  return LOWER_CASED.of(text, (t) => t.toLowerCase());
}

const LOWER_CASED = new StringMemo<string>(16_384);

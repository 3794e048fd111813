/** Collects positional parameters while a statement is assembled. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and returns its placeholder ("$3"). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

import type { QueryOptions, Row, SqlClient, TransactionOptions } from "../../src/store/sql-client.js";

/**
 * A real SqlClient with faults injected: in "fail" mode statements matching
 * the pattern throw as a dropped connection does (inside transactions too);
 * in "hold" mode every transaction, and every matching statement outside
 * one, waits to begin until `heal` (so a held write never blocks PGlite's
 * single connection). Everything else
 * reaches the real database, so the code under test runs its real SQL.
 */
export class FaultySqlClient implements SqlClient {
  mode: "pass" | "fail" | "hold" = "pass";
  /** Statements that failed on purpose. */
  failures = 0;
  private gate: { promise: Promise<void>; open: () => void } | undefined;

  constructor(
    private readonly real: SqlClient,
    private readonly pattern: RegExp,
    private readonly parent?: FaultySqlClient,
  ) {}

  get kind() {
    return this.real.kind;
  }

  fail(): void {
    this.mode = "fail";
  }

  hold(): void {
    this.mode = "hold";
    let open = () => {};
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
  }

  /** Back to normal; held transactions go ahead. */
  heal(): void {
    this.mode = "pass";
    this.gate?.open();
    this.gate = undefined;
  }

  async query<T extends Row = Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> {
    const root = this.parent ?? this;
    if (root.mode === "fail" && this.pattern.test(text)) {
      root.failures += 1;
      throw Object.assign(new Error("connection terminated (injected)"), { code: "CONNECTION_CLOSED" });
    }
    // Inside a transaction the transaction itself was held.
    if (this.mode === "hold" && !this.parent && this.pattern.test(text)) await this.gate?.promise;
    return this.real.query<T>(text, params, options);
  }

  exec(script: string): Promise<void> {
    return this.real.exec(script);
  }

  listen(channel: string, onNotify: (payload: string) => void, onConnect?: () => void): Promise<() => Promise<void>> {
    return this.real.listen(channel, onNotify, onConnect);
  }

  async transaction<T>(work: (tx: SqlClient) => Promise<T>, options?: TransactionOptions): Promise<T> {
    if (this.mode === "hold") await this.gate?.promise;
    return this.real.transaction((tx) => work(new FaultySqlClient(tx, this.pattern, this.parent ?? this)), options);
  }

  close(): Promise<void> {
    return this.real.close();
  }
}

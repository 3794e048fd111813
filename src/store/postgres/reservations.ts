import type postgres from "postgres";

type Sql = postgres.Sql<Record<string, never>>;
type Reserved = postgres.ReservedSql<Record<string, never>>;

/** Where a transaction gets its connection, and how many pool connections have closed so far. */
export interface Pool {
  reserve(): Promise<Reserved>;
  readonly closes: number;
}

/**
 * `sql.reserve()`, asked again whenever a pool connection closes while it
 * waits. postgres.js 3.4.9 re-opens a closed connection for the first request
 * waiting for one; when that request is a reserve, the new connection's
 * set-up drops it (ReadyForQuery nulls it to fetch the array types), so it
 * never settles and its transaction would wait out its deadline. Each close
 * therefore asks again for every waiting reserve: the first connection to
 * come is used, any later one goes straight back to the pool.
 */
export class Reservations implements Pool {
  private readonly waiting = new Set<() => void>();
  closes = 0;

  constructor(private readonly sql: () => Sql) {}

  connectionClosed(): void {
    this.closes += 1;
    if (this.waiting.size === 0) return;
    // After postgres.js has handed the closed connection to the request it picked.
    setImmediate(() => {
      for (const askAgain of [...this.waiting]) askAgain();
    });
  }

  reserve(): Promise<Reserved> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const ask = () => {
        const settle = () => {
          settled = true;
          this.waiting.delete(ask);
        };
        this.sql()
          .reserve()
          .then(
            (reserved) => {
              if (settled) return reserved.release();
              settle();
              resolve(reserved);
            },
            (error: unknown) => {
              if (settled) return;
              settle();
              reject(error);
            },
          );
      };
      this.waiting.add(ask);
      ask();
    });
  }
}

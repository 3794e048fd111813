import type { SqlClient } from "../../src/store/sql-client.js";

/** Wraps the real client and counts statements, so a test can prove a path made none. */
export function counting(db: SqlClient): SqlClient & { statements: string[] } {
  const statements: string[] = [];
  const wrap = (inner: SqlClient): SqlClient => ({
    kind: inner.kind,
    query: (text, params, options) => {
      statements.push(text);
      return inner.query(text, params, options);
    },
    exec: (script) => {
      statements.push(script);
      return inner.exec(script);
    },
    transaction: (work, options) => inner.transaction((tx) => work(wrap(tx)), options),
    listen: (channel, onNotify, onConnect) => inner.listen(channel, onNotify, onConnect),
    close: () => inner.close(),
  });
  return Object.assign(wrap(db), { statements });
}

/** Resolves once `check` holds, polling; fails the test if it does not within `timeoutMs`. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

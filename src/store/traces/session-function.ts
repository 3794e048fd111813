import { createHash } from "node:crypto";
import type { SqlClient } from "../sql-client.js";

/**
 * Through PGlite's query API the trace batch insert is parsed, analysed and
 * planned on every flush, and that costs more than running it (EXPLAIN
 * ANALYZE: 0.8 ms planning and 1.8 ms executing of a 5.8 ms statement).
 * Measured on PGlite 0.5 with the bench's in-turn traces, one trace a
 * statement: 5.8 ms a statement (9.8 when it counts recall misses); the same
 * statement inside a PL/pgSQL function, which keeps its statements' plans for
 * the session, 3.65 (4.0). So a statement run on
 * every flush is wrapped, once per session, in a temporary function made from
 * its own text, and called by name. PostgreSQL needs none of this: postgres.js
 * prepares every statement.
 */

/** SQLSTATE undefined_function: the session that held the function is gone (a new PGlite). */
const UNDEFINED_FUNCTION = "42883";
const BODY_QUOTE = "$recall_session_fn$";

export class SessionFunctions {
  private readonly created = new Set<string>();
  /** Each statement's function name (a hash of its text), by the text: the statements are a few constants. */
  private readonly names = new Map<string, string>();

  constructor(private readonly db: SqlClient) {}

  /**
   * The rows of `text` (a statement of three text parameters that returns one
   * text column), run through its session function.
   */
  async textRows(text: string, params: readonly [string, string, string]): Promise<string[]> {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `pg_temp.recall_fn_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
      this.names.set(text, name);
    }
    const call = () => this.db.query<{ value: string }>(`SELECT value FROM ${name}($1::text, $2::text, $3::text) AS value`, params);
    if (!this.created.has(name)) await this.create(name, text);
    try {
      return (await call()).map((r) => r.value);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNDEFINED_FUNCTION) throw error;
      // A function no longer there ran nothing: made again, the call is made once more.
      this.created.delete(name);
      await this.create(name, text);
      return (await call()).map((r) => r.value);
    }
  }

  private async create(name: string, text: string): Promise<void> {
    if (text.includes(BODY_QUOTE)) throw new Error("a session function's statement cannot hold its body's quote");
    await this.db.query(
      `CREATE OR REPLACE FUNCTION ${name}(text, text, text) RETURNS SETOF text LANGUAGE plpgsql AS ${BODY_QUOTE}
       BEGIN RETURN QUERY ${text}; END ${BODY_QUOTE}`,
    );
    this.created.add(name);
  }
}

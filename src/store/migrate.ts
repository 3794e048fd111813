import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { SqlClient } from "./sql-client.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** sql/ at the package root, from src/store or dist/store alike. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../sql/", import.meta.url));

/** A migration's name in the PGlite template's manifest (store/pglite/pglite-template.ts): "0001_initial". */
export const migrationKey = (m: Migration) => `${String(m.version).padStart(4, "0")}_${m.name}`;

/** Arbitrary constant naming recall's migration lock among other advisory locks. */
const MIGRATION_LOCK_KEY = 7_311_046_211;

/** Reads sql/NNNN_name.sql files in version order. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(`${dir}/${file}`, "utf8"),
    })),
  );
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so
 * two sidecars starting together against one database cannot race: the
 * second waits, then finds nothing left to do. Returns the versions applied.
 */
export async function migrate(db: SqlClient, migrations: Migration[]): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer     PRIMARY KEY,
      name       text        NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>("SELECT version FROM schema_migrations");
    const applied = new Set(rows.map((r) => Number(r.version)));
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      done.push(m.version);
    }
    return done;
  });
}

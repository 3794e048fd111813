import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import postgres from "postgres";
import { inject } from "vitest";
import { loadMigrations, migrate } from "../../src/store/migrate.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { createPgliteClient, pgliteExtensions, pgliteVectorExtensions } from "../../src/store/pglite/pglite-client.js";
import { loadPgliteTemplate } from "../../src/store/pglite/pglite-template.js";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { loadParser, routingChecked, type RoutingLog } from "./statement-routing.js";

/**
 * Fresh, migrated stores for tests. Both kinds run the same suites; the
 * PostgreSQL one gets a database of its own, dropped at the end.
 */

/** Admin URL of the PostgreSQL server the tests use (CI creates a fresh database and points here). */
export const POSTGRES_URL = process.env.RECALL_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestStore {
  kind: "pglite" | "postgres";
  store: MemoryStore;
  /** A URL the sidecar can use (postgres only). */
  url?: string;
  /** Every statement the store issued, checked for routing by tenant (test/support/statement-routing.ts). */
  routing: RoutingLog;
  dispose(): Promise<void>;
}

/** The store over `client`, every statement it issues checked for routing by tenant. */
async function checkedStore(client: SqlClient): Promise<{ store: MemoryStore; routing: RoutingLog }> {
  await loadParser();
  const routing: RoutingLog = { statements: 0, problems: [] };
  return { store: new MemoryStore(routingChecked(client, routing)), routing };
}

export async function freshPglite(): Promise<TestStore> {
  const tar = await readFile(inject("pgliteTemplate"));
  const db = await loadPgliteTemplate(tar, pgliteExtensions);
  const { store, routing } = await checkedStore(createPgliteClient(db));
  return { kind: "pglite", store, routing, dispose: () => store.db.close() };
}

/** PGlite with pgvector loaded (the semantic arm's store); the semantic schema is not applied yet. */
export async function freshPgliteWithVector(): Promise<TestStore> {
  const tar = await readFile(inject("pgliteTemplate"));
  const db = await loadPgliteTemplate(tar, pgliteVectorExtensions);
  const { store, routing } = await checkedStore(createPgliteClient(db));
  return { kind: "pglite", store, routing, dispose: () => store.db.close() };
}

/** Creates an empty database on the test server; returns its URL and a drop function. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `recall_t_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

export async function freshPostgres(): Promise<TestStore> {
  const database = await freshPostgresDatabase();
  const client = createPostgresClient(database.url, 4);
  await migrate(client, await loadMigrations());
  const { store, routing } = await checkedStore(client);
  return {
    kind: "postgres",
    store,
    routing,
    url: database.url,
    async dispose() {
      await store.db.close();
      await database.drop();
    },
  };
}

/** Both store kinds, for `describe.each(STORE_KINDS)`. */
export const STORE_KINDS = [
  { kind: "pglite" as const, open: freshPglite },
  { kind: "postgres" as const, open: freshPostgres },
];

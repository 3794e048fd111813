import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import { MemoryStore } from "./memory-store.js";
import { loadMigrations, migrate, migrationKey } from "./migrate.js";
import { lockDataDir } from "./pglite/data-dir-lock.js";
import { EPHEMERAL_DATA_DIR, PGLITE_WORKER_PATH, startPgliteWorker, takePgliteWorker } from "./ephemeral-start.js";
import { pgliteWorkerClient } from "./pglite/pglite-worker-client.js";
import { enableSemantic } from "./candidates/semantic-store.js";
import type { SqlClient } from "./sql-client.js";
import { pgliteOpenError, postgresOpenError } from "./store-open-error.js";
import { ensurePrivateDir, tightenTree } from "./private-files.js";

/**
 * Opens the configured store and brings its schema up to date; with
 * `semantic`, also the semantic arm's optional schema (refused, with a
 * ConfigError naming the fix, where pgvector is not available). Each kind's
 * driver is imported when that kind is opened: a start loads only its own
 * (an embedded store's PGlite loads in its worker thread).
 */
export async function openStore(
  config: Config["store"],
  logger: Logger,
  options: { semantic?: boolean; instrument?: (client: SqlClient) => SqlClient } = {},
): Promise<MemoryStore> {
  let client: SqlClient;
  let fromTemplate: boolean | undefined;
  let templateMigrations: string[] | null = null;
  if (config.kind === "postgres") {
    const { createPostgresClient } = await import("./postgres/postgres-client.js");
    client = createPostgresClient(config.url, config.poolMax, { prepare: config.pooler === "none" });
  } else if (config.dataDir === EPHEMERAL_DATA_DIR) {
    const ephemeral = await openEphemeral(options.semantic ?? false);
    client = ephemeral.client;
    fromTemplate = ephemeral.fromTemplate;
    templateMigrations = ephemeral.migrations;
    if (!fromTemplate) logger.warn("no PGlite template (run npm run build): the ephemeral store is created and migrated at start");
  } else {
    const dataDir = config.dataDir;
    // Created 0700; one open to other users is refused, as PostgreSQL refuses its data directory.
    await ensurePrivateDir(dataDir, "the data directory", "RECALL_DATA_DIR").catch((error: unknown) => {
      throw pgliteOpenError(error, dataDir);
    });
    // One process per directory: a second one would silently overwrite the first one's writes.
    const release = await lockDataDir(dataDir);
    try {
      const created = !existsSync(join(dataDir, "PG_VERSION"));
      const pglite = await openDataDir(dataDir, options.semantic ?? false);
      // A new store: PGlite lays its files out 0666 in 0755 folders (from its template tar), whatever
      // the umask. Once, at creation (a walk costs ~40 ms); what PostgreSQL creates later is 0600.
      if (created) {
        await tightenTree(dataDir).catch(async (error: unknown) => {
          await pglite.close().catch(() => {});
          throw error;
        });
      }
      client = { ...pglite, close: () => pglite.close().finally(release) };
    } catch (error) {
      await release();
      throw pgliteOpenError(error, dataDir);
    }
  }
  try {
    const migrations = await loadMigrations();
    // A template holding every migration needs no migration step (about a tenth of an ephemeral start's CPU).
    const current = templateMigrations?.join() === migrations.map(migrationKey).join();
    const applied = current ? [] : await migrate(client, migrations);
    if (options.semantic) await enableSemantic(client);
    logger.info({ store: config.kind, applied, semantic: options.semantic ?? false, fromTemplate }, "store ready");
  } catch (error) {
    await client.close().catch(() => {});
    throw config.kind === "postgres" ? postgresOpenError(error, config.url) : error;
  }
  return new MemoryStore(options.instrument ? options.instrument(client) : client);
}

/** A data directory's PGlite in its worker thread; in process where the worker was never built. */
async function openDataDir(dataDir: string, vector: boolean): Promise<SqlClient> {
  if (existsSync(PGLITE_WORKER_PATH)) return (await pgliteWorkerClient(startPgliteWorker(vector, dataDir))).client;
  const { createPgliteClient, openPglite } = await import("./pglite/pglite-client.js");
  return createPgliteClient(await openPglite(dataDir, { vector }));
}

/** The ephemeral store in its worker thread (prestarted, or started now); in process where the worker was never built. */
async function openEphemeral(vector: boolean): Promise<{ client: SqlClient; fromTemplate: boolean; migrations: string[] | null }> {
  const worker = takePgliteWorker(vector);
  if (worker) return pgliteWorkerClient(worker);
  const [{ openEphemeralPglite }, { createPgliteClient }] = await Promise.all([import("./pglite/pglite-template.js"), import("./pglite/pglite-client.js")]);
  const { db, ...template } = await openEphemeralPglite({ vector });
  return { client: createPgliteClient(db), ...template };
}

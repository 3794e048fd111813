import { mkdir } from "node:fs/promises";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { MemoryStore } from "./memory-store.js";
import { loadMigrations, migrate } from "./migrate.js";
import { lockDataDir } from "./data-dir-lock.js";
import { createPgliteClient, openPglite } from "./pglite-client.js";
import { createPostgresClient } from "./postgres-client.js";
import { enableSemantic } from "./semantic-store.js";
import type { SqlClient } from "./sql-client.js";
import { pgliteOpenError, postgresOpenError } from "./store-open-error.js";

/**
 * Opens the configured store and brings its schema up to date; with
 * `semantic`, also the semantic arm's optional schema (refused, with a
 * ConfigError naming the fix, where pgvector is not available).
 */
export async function openStore(
  config: Config["store"],
  logger: Logger,
  options: { semantic?: boolean; instrument?: (client: SqlClient) => SqlClient } = {},
): Promise<MemoryStore> {
  let client: SqlClient;
  if (config.kind === "postgres") {
    client = createPostgresClient(config.url, config.poolMax, { prepare: config.pooler === "none" });
  } else {
    const dataDir = config.dataDir;
    await mkdir(dataDir, { recursive: true }).catch((error: unknown) => {
      throw pgliteOpenError(error, dataDir);
    });
    // One process per directory: a second one would silently overwrite the first one's writes.
    const release = await lockDataDir(dataDir);
    try {
      const pglite = createPgliteClient(await openPglite(dataDir, { vector: options.semantic ?? false }));
      client = { ...pglite, close: () => pglite.close().finally(release) };
    } catch (error) {
      await release();
      throw pgliteOpenError(error, dataDir);
    }
  }
  try {
    const applied = await migrate(client, await loadMigrations());
    if (options.semantic) await enableSemantic(client);
    logger.info({ store: config.kind, applied, semantic: options.semantic ?? false }, "store ready");
  } catch (error) {
    await client.close().catch(() => {});
    throw config.kind === "postgres" ? postgresOpenError(error, config.url) : error;
  }
  return new MemoryStore(options.instrument ? options.instrument(client) : client);
}

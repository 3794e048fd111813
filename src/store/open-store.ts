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

/**
 * Opens the configured store and brings its schema up to date; with
 * `semantic`, also the semantic arm's optional schema (refused, with a
 * ConfigError naming the fix, where pgvector is not available).
 */
export async function openStore(config: Config["store"], logger: Logger, options: { semantic?: boolean } = {}): Promise<MemoryStore> {
  let client: SqlClient;
  if (config.kind === "postgres") {
    client = createPostgresClient(config.url, config.poolMax, { prepare: config.pooler === "none" });
  } else {
    await mkdir(config.dataDir, { recursive: true });
    // One process per directory: a second one would silently overwrite the first one's writes.
    const release = await lockDataDir(config.dataDir);
    try {
      const pglite = createPgliteClient(await openPglite(config.dataDir, { vector: options.semantic ?? false }));
      client = { ...pglite, close: () => pglite.close().finally(release) };
    } catch (error) {
      await release();
      throw error;
    }
  }
  try {
    const applied = await migrate(client, await loadMigrations());
    if (options.semantic) await enableSemantic(client);
    logger.info({ store: config.kind, applied, semantic: options.semantic ?? false }, "store ready");
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return new MemoryStore(client);
}

import { mkdir } from "node:fs/promises";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { MemoryStore } from "./memory-store.js";
import { loadMigrations, migrate } from "./migrate.js";
import { lockDataDir } from "./data-dir-lock.js";
import { createPgliteClient, openPglite } from "./pglite-client.js";
import { EPHEMERAL_DATA_DIR, migrationKey, openEphemeralPglite } from "./pglite-template.js";
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
  let fromTemplate: boolean | undefined;
  let templateMigrations: string[] | null = null;
  if (config.kind === "postgres") {
    client = createPostgresClient(config.url, config.poolMax, { prepare: config.pooler === "none" });
  } else if (config.dataDir === EPHEMERAL_DATA_DIR) {
    const ephemeral = await openEphemeralPglite({ vector: options.semantic ?? false });
    client = createPgliteClient(ephemeral.db);
    fromTemplate = ephemeral.fromTemplate;
    templateMigrations = ephemeral.migrations;
    if (!fromTemplate) logger.warn("no PGlite template (run npm run build): the ephemeral store is created and migrated at start");
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
    const migrations = await loadMigrations();
    // A template holding every migration needs no migration step (about a tenth of an ephemeral start's CPU).
    const current = templateMigrations?.join() === migrations.map(migrationKey).join();
    const applied = current ? [] : await migrate(client, migrations);
    if (options.semantic) await enableSemantic(client);
    logger.info({ store: config.kind, applied, semantic: options.semantic ?? false, fromTemplate }, "store ready");
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return new MemoryStore(client);
}

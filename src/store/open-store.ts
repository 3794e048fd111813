import { mkdir } from "node:fs/promises";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { MemoryStore } from "./memory-store.js";
import { loadMigrations, migrate } from "./migrate.js";
import { createPgliteClient, openPglite } from "./pglite-client.js";
import { createPostgresClient } from "./postgres-client.js";
import type { SqlClient } from "./sql-client.js";

/** Opens the configured store and brings its schema up to date. */
export async function openStore(config: Config["store"], logger: Logger): Promise<MemoryStore> {
  let client: SqlClient;
  if (config.kind === "postgres") {
    client = createPostgresClient(config.url, config.poolMax);
  } else {
    await mkdir(config.dataDir, { recursive: true });
    client = createPgliteClient(await openPglite(config.dataDir));
  }
  try {
    const applied = await migrate(client, await loadMigrations());
    logger.info({ store: config.kind, applied }, "store ready");
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return new MemoryStore(client);
}

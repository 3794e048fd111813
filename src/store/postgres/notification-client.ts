import type { Config } from "../../config/config.js";
import { createPostgresClient } from "./postgres-client.js";
import type { SqlClient } from "../sql-client.js";

/**
 * The connection the head tracker LISTENs on. LISTEN needs a session of its
 * own, which a transaction-mode pooler cannot give: behind one, notifications
 * come through RECALL_DATABASE_LISTEN_URL (a direct URL) or not at all, and
 * then the tracker polls (recall/moments/head-tracker.ts). NOTIFY itself is sent in
 * the write transaction, through the pool, and works through any pooler.
 */
export interface NotificationClient {
  /** null: no notification connection, poll instead. */
  readonly listener: Pick<SqlClient, "listen"> | null;
  close(): Promise<void>;
}

export function openNotificationClient(config: Config["store"], storeDb: SqlClient): NotificationClient {
  if (config.kind === "pglite") return { listener: storeDb, close: async () => {} };
  if (config.listenUrl) {
    // postgres.js opens the listening connection itself, on first LISTEN; no pool is used.
    const direct = createPostgresClient(config.listenUrl, 1);
    return { listener: direct, close: () => direct.close() };
  }
  if (config.pooler === "transaction") return { listener: null, close: async () => {} };
  return { listener: storeDb, close: async () => {} };
}

import { mkdir, rm, stat } from "node:fs/promises";
import type { Config } from "../config/config.js";
import type { Principal } from "../domain/model.js";
import type { Logger } from "../log/logger.js";
import { EPHEMERAL_DATA_DIR } from "../store/ephemeral-start.js";
import { openStore } from "../store/open-store.js";
import { UsageError } from "./usage-error.js";

/**
 * `recall demo --reset`: the data directory wiped and made again, empty and
 * private (0700, as the sidecar wants it). The demo shares the default
 * directory with `recall serve`, so it is wiped only when it holds no memory
 * but the demo principal's: opened first (which also refuses a directory a
 * running sidecar holds), counted, closed, then removed.
 */
export async function resetDemoDataDir(store: Config["store"], demo: Principal, logger: Logger): Promise<void> {
  if (store.kind !== "pglite" || store.dataDir === EPHEMERAL_DATA_DIR) return;
  const dir = store.dataDir;
  if (await exists(dir)) {
    const opened = await openStore(store, logger);
    let others: number;
    try {
      others = await opened.otherPrincipalCount(demo);
    } finally {
      await opened.db.close();
    }
    if (others > 0) {
      throw new UsageError(
        `--reset: ${dir} holds the memory of ${others} principal(s) besides ${demo.tenantId}/${demo.principalId}; ` +
          "not wiped. Run the demo on a directory of its own (RECALL_DATA_DIR=./.recall-demo) or remove it yourself",
      );
    }
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  process.stdout.write(`recall demo: ${dir} wiped; starting on an empty store\n`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}

import { join } from "node:path";
import type { Config } from "../config/config.js";
import { principalKey } from "../domain/principal-key.js";
import type { Logger } from "../log/logger.js";
import { EPHEMERAL_DATA_DIR } from "../store/ephemeral-start.js";
import type { PrincipalIndexes } from "../principal-index/index-router.js";
import { principalsToWarm, readWarmList, serializeWarmList, WARM_LIST_FILE, writeWarmList, type WarmEntry } from "../principal-index/warm-list.js";

/**
 * A restart that does not make every principal's first call slow: the
 * sidecar keeps the list of principals whose indexes it holds in its data
 * directory (written every SAVE_INTERVAL_MS when it changed, and at stop),
 * and a new start loads those indexes in the background, most recently used
 * first, as far as RECALL_INDEX_MB holds them. Calls are served meanwhile
 * (a principal not loaded yet is answered from SQL, as always).
 */

/** A crash or a kill loses at most this much of the list's changes. */
const SAVE_INTERVAL_MS = 30_000;

export interface IndexWarming {
  stop(): Promise<void>;
}

/** Where the warm list lives: the data directory, unless warming is off or the store is ephemeral (nothing outlives it). */
export function warmListDir(config: Config): string | null {
  const ephemeral = config.store.kind === "pglite" && config.store.dataDir === EPHEMERAL_DATA_DIR;
  return ephemeral ? null : config.principalIndex.warmDir;
}

export function startIndexWarming(
  indexes: Pick<PrincipalIndexes, "recentFirst" | "warm">,
  dir: string,
  maxBytes: number,
  logger: Logger,
  saveIntervalMs = SAVE_INTERVAL_MS,
): IndexWarming {
  const path = join(dir, WARM_LIST_FILE);
  let stopped = false;
  let saved = "";
  // What the last run's list holds that is not loaded yet: kept in the list until the walk ends,
  // so a sidecar stopped again before then does not forget it.
  let pending: WarmEntry[] = [];
  const save = async () => {
    const held = indexes.recentFirst();
    const keys = new Set(held.map(principalKey));
    const text = serializeWarmList([...held, ...pending.filter((e) => !keys.has(principalKey(e)))]);
    if (text === saved) return;
    await writeWarmList(path, text);
    saved = text;
  };
  // A directory that cannot be written (a read-only file system) is said once, not every interval.
  let failing = false;
  const saveLogged = () =>
    save().then(
      () => {
        if (failing) logger.info({ path }, "index warm list written again");
        failing = false;
      },
      (err: unknown) => {
        if (!failing) logger.warn({ err, path }, "index warm list not written; a restart will load indexes on demand");
        failing = true;
      },
    );

  const walk = async () => {
    const list = await readWarmList(path).catch((err: unknown) => {
      logger.warn({ err, path }, "index warm list unreadable; no index is warmed");
      return [];
    });
    const principals = principalsToWarm(list, maxBytes);
    if (principals.length === 0) return;
    pending = principals;
    const started = Date.now();
    const loaded = await indexes.warm(principals, () => stopped);
    if (!stopped) pending = [];
    logger.info({ listed: list.length, loaded, ms: Date.now() - started }, "principal indexes warmed from the last run");
  };
  void walk().catch((err: unknown) => logger.warn({ err }, "index warming stopped"));
  const timer = setInterval(() => void saveLogged(), saveIntervalMs).unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      // Not waiting for the walk: a load in flight ends with the store, and what it was loading stays listed.
      await saveLogged();
    },
  };
}

import type { Config } from "../config/config.js";
import { createLogger } from "../log/logger.js";
import { startSidecar, type Sidecar } from "../sidecar/start-sidecar.js";
import { keepServingThroughDriverRejections } from "../store/postgres/driver-rejections.js";
import { EPHEMERAL_DATA_DIR } from "../store/ephemeral-start.js";

/**
 * Runs the sidecar until SIGTERM or SIGINT, then shuts down gracefully.
 * `--ephemeral` serves an empty in-memory store, whatever the store settings say.
 */
export async function runServe(config: Config, args: readonly string[] = []): Promise<number> {
  const unknown = args.filter((a) => a !== "--ephemeral");
  if (unknown.length > 0) {
    process.stderr.write(`recall serve: unknown argument "${unknown[0]}" (usage: recall serve [--ephemeral])\n`);
    return 2;
  }
  const effective: Config = args.includes("--ephemeral") ? { ...config, store: { kind: "pglite", dataDir: EPHEMERAL_DATA_DIR } } : config;
  const logger = createLogger(effective.logLevel);
  keepServingThroughDriverRejections(logger);
  const sidecar = await startSidecar(effective, logger);
  await untilSignalled(sidecar, logger);
  // Everything is closed: the process should now exit by itself. A handle some dependency left
  // open (a reconnect timer after an outage, say) must not keep a stopped sidecar alive, so after
  // a moment it exits anyway and says what was still open.
  setTimeout(() => {
    logger.warn({ activeResources: process.getActiveResourcesInfo() }, "stopped, but handles are still open: exiting");
    process.exit(0);
  }, LINGER_MS).unref();
  return 0;
}

/** How long a stopped sidecar waits for its event loop to drain before it exits anyway. */
const LINGER_MS = 2000;

export function untilSignalled(sidecar: Sidecar, logger: { info: (o: object, m: string) => void }): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info({ signal }, "shutting down");
      // A second signal while draining means "now".
      process.once(signal, () => process.exit(130));
      sidecar.stop().then(resolve, () => resolve());
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  });
}

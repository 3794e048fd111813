import type { Config } from "../config.js";
import { createLogger } from "../logger.js";
import { startSidecar, type Sidecar } from "../main.js";

/** Runs the sidecar until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runServe(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel);
  const sidecar = await startSidecar(config, logger);
  await untilSignalled(sidecar, logger);
  return 0;
}

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

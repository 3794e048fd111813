import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Config } from "../config/config.js";
import { InvalidArgumentError, NotFoundError } from "../domain/errors.js";
import type { Principal } from "../domain/model.js";
import { createLogger } from "../log/logger.js";
import type { MemoryStore } from "../store/memory-store.js";
import { openStore } from "../store/open-store.js";

/**
 * Shared shape of the CLI commands that read or change one principal's
 * traces: the principal from --tenant/--principal or RECALL_TENANT_ID /
 * RECALL_PRINCIPAL_ID, the configured store opened directly (as `recall
 * import` does; stop a sidecar that uses the same PGlite directory first),
 * and the same typed errors as the RPCs, printed instead of mapped.
 */

export const PRINCIPAL_OPTIONS = {
  tenant: { type: "string", default: process.env.RECALL_TENANT_ID },
  principal: { type: "string", default: process.env.RECALL_PRINCIPAL_ID },
} as const satisfies ParseArgsConfig["options"];

export function principalFrom(values: { tenant?: string | undefined; principal?: string | undefined }): Principal | null {
  return values.tenant && values.principal ? { tenantId: values.tenant, principalId: values.principal } : null;
}

/** Opens the store, runs `work`, closes the store; returns the exit code. */
export async function withStore(
  config: Config,
  command: string,
  work: (store: MemoryStore, out: (text: string) => void) => Promise<number>,
): Promise<number> {
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  const store = await openStore(config.store, logger);
  try {
    return await work(store, (text) => process.stdout.write(text));
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof InvalidArgumentError) {
      process.stderr.write(`recall ${command}: ${error.message}\n`);
      return error instanceof NotFoundError ? 1 : 2;
    }
    throw error;
  } finally {
    await store.db.close();
  }
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export { parseArgs };

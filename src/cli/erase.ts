import type { Config } from "../config/config.js";
import { erasePrincipal } from "../store/erase-principal.js";
import { PRINCIPAL_OPTIONS, parseArgs, principalFrom, withStore } from "./store-command.js";

const USAGE = "usage: recall erase --tenant T --principal P";

const HELP = `${USAGE}

Erases everything stored for one principal, in one transaction: beliefs, episodes, aliases, persona
entries, rejections, traces, citations, memory.recalled events, re-derivation hints, lexical statistics
and embeddings. Other principals and tenants are untouched. Prints the rows deleted per table.
The same path as MemoryWriteService.ErasePrincipal. Idempotent.

Opens the configured store directly: stop a sidecar that uses the same PGlite directory first. On
PostgreSQL, running sidecars are notified and drop their cached snapshots of the principal.
--tenant and --principal default to RECALL_TENANT_ID and RECALL_PRINCIPAL_ID.`;

/** `recall erase --tenant T --principal P`: the CLI side of ErasePrincipal. */
export async function runErase(config: Config, args: string[]): Promise<number> {
  let values: { tenant?: string | undefined; principal?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({ args, options: { ...PRINCIPAL_OPTIONS, help: { type: "boolean", short: "h" } } }));
  } catch (error) {
    process.stderr.write(`recall erase: ${error instanceof Error ? error.message : String(error)} (${USAGE})\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const principal = principalFrom(values);
  if (!principal) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  return withStore(config, "erase", async (store, out) => {
    const { deleted, position } = await erasePrincipal(store.db, principal);
    const counts = Object.entries(deleted).map(([table, n]) => `${table} ${n}`).join(", ");
    out(`erased ${principal.tenantId}/${principal.principalId}: ${counts}; store position ${position}\n`);
    return 0;
  });
}

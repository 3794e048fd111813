import { parseArgs } from "node:util";
import type { Config } from "../config/config.js";
import { createLogger } from "../log/logger.js";
import { RETRIEVAL_POLICY } from "../recall/policy.js";
import { openStore } from "../store/open-store.js";

/**
 * `recall report snapshots --tenant T --principal P [--session S]`: snapshot
 * utilization and misses per session, from the traces, as JSON. The two
 * signals pull in opposite directions; tune the snapshot caps until neither
 * fires (utilization below ~0.25 → shrink; frequent misses → grow).
 */
export async function runReport(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: "string", default: process.env.RECALL_TENANT_ID },
      principal: { type: "string", default: process.env.RECALL_PRINCIPAL_ID },
      session: { type: "string" },
    },
  });
  if (positionals[0] !== "snapshots" || !values.tenant || !values.principal) {
    process.stderr.write("usage: recall report snapshots --tenant T --principal P [--session S]\n");
    return 2;
  }
  const store = await openStore(config.store, createLogger(config.logLevel === "info" ? "warn" : config.logLevel));
  try {
    const sessions = await store.snapshotReport(
      { tenantId: values.tenant, principalId: values.principal },
      RETRIEVAL_POLICY.durableTypes,
      values.session ?? null,
    );
    const snapshotBeliefs = sessions.reduce((sum, s) => sum + s.snapshotSize, 0);
    const cited = sessions.reduce((sum, s) => sum + s.cited, 0);
    const report = {
      sessions,
      totals: {
        sessions: sessions.length,
        utilization: snapshotBeliefs === 0 ? 0 : cited / snapshotBeliefs,
        misses: sessions.reduce((sum, s) => sum + s.misses, 0),
      },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  } finally {
    await store.db.close();
  }
}

import { connectBench } from "./grpc-client.js";
import { inTurnOp, type Checks, type MeasuredPrincipal } from "./scenarios.js";
import { indexesLoaded, startSidecar } from "./sidecar-process.js";

/** The first calls after start-up, one at a time and each timed alone: what a cold sidecar (and a cold index) costs. */

export interface FirstCall {
  label: string;
  ms: number;
  /** Why it failed, or "". */
  error: string;
}

export async function firstCalls(calls: { label: string; op: () => Promise<void> }[]): Promise<FirstCall[]> {
  const out: FirstCall[] = [];
  for (const call of calls) {
    const started = performance.now();
    let error = "";
    await call.op().catch((e: unknown) => (error = e instanceof Error ? e.message : String(e)));
    out.push({ label: call.label, ms: performance.now() - started, error });
  }
  return out;
}

export function formatFirstCalls(calls: readonly FirstCall[]): string[] {
  return calls.map((c) => `  ${c.label}: ${c.ms.toFixed(1)} ms${c.error ? ` (failed: ${c.error})` : ""}`);
}

/**
 * A restarted sidecar's first in-turn recall in a session whose snapshot the previous sidecar showed
 * (session bench-s0). With `warmList`, the restart is on the previous sidecar's data directory
 * (RECALL_INDEX_WARM=on) and the call waits until the `listed` indexes of its warm list are loaded;
 * `loaded` says how long that took after it listened.
 */
export async function restartedSessionCall(
  env: Record<string, string>,
  tenant: string,
  who: MeasuredPrincipal,
  size: string,
  seed: number,
  checks: Checks,
  warmList?: { listed: number },
): Promise<{ calls: FirstCall[]; loaded?: string }> {
  const sidecar = await startSidecar(warmList ? { ...env, RECALL_INDEX_WARM: "on" } : env);
  const client = connectBench(sidecar.address, { tenant, principal: who.principal }, 2_000);
  try {
    const loaded = warmList && (await indexesLoaded(sidecar.address, warmList.listed, 120_000, "it listened"));
    const label = `first in-turn recall of a resumed session after a restart, ${size} principal${warmList ? ", its index warmed" : ""}`;
    return { calls: await firstCalls([{ label, op: () => inTurnOp(client, who, seed, checks)(0) }]), loaded };
  } finally {
    client.close();
    await sidecar.stop();
  }
}

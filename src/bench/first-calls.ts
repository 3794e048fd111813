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

/** A restarted sidecar's first in-turn recall in a session whose snapshot the previous sidecar showed (session bench-s0). */
export async function resumedSessionCall(
  env: Record<string, string>,
  tenant: string,
  who: MeasuredPrincipal,
  size: string,
  seed: number,
  checks: Checks,
): Promise<FirstCall[]> {
  const sidecar = await startSidecar(env);
  const client = connectBench(sidecar.address, { tenant, principal: who.principal }, 2_000);
  try {
    return await firstCalls([
      { label: `first in-turn recall of a resumed session after a restart, ${size} principal`, op: () => inTurnOp(client, who, seed, checks)(0) },
    ]);
  } finally {
    client.close();
    await sidecar.stop();
  }
}

/**
 * A restarted sidecar on the data directory of one that held `listed` indexes (RECALL_INDEX_WARM=on):
 * how long the warm list took to load after it listened, then the 100k principal's first in-turn recall.
 */
export async function warmedRestartCall(
  env: Record<string, string>,
  listed: number,
  tenant: string,
  who: MeasuredPrincipal,
  size: string,
  seed: number,
  checks: Checks,
): Promise<{ calls: FirstCall[]; loaded: string }> {
  const sidecar = await startSidecar({ ...env, RECALL_INDEX_WARM: "on" });
  const client = connectBench(sidecar.address, { tenant, principal: who.principal }, 2_000);
  try {
    const loaded = await indexesLoaded(sidecar.address, listed, 120_000, "it listened");
    const calls = await firstCalls([
      { label: `first in-turn recall of the ${size} principal after a restart, its index warmed`, op: () => inTurnOp(client, who, seed, checks)(2) },
    ]);
    return { calls, loaded };
  } finally {
    client.close();
    await sidecar.stop();
  }
}

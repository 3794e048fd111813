import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { connectBench } from "./grpc-client.js";
import { inTurnOp, type Checks, type MeasuredPrincipal } from "./scenarios.js";
import { rssMiB, startSidecar } from "./sidecar-process.js";

/**
 * What a sidecar costs a pod in memory, as its resident set (RSS): idle, for
 * each kind of store, and with principals' indexes loaded. Sizes, unlike
 * timings, hardly move with the machine's load.
 */

/** The loaded figure: recalls per principal, and the pause between passes that lets background loads finish. */
const MEMORY_PASSES = 3;
const MEMORY_PASS_PAUSE_MS = 1_000;

export interface LoadedRss {
  principals: number;
  startMiB: number;
  nowMiB: number;
  peakMiB: number;
}

/** RSS of a fresh sidecar once `principals` are loaded: a few passes of recalls, with pauses for background loads. */
export async function loadedRss(env: Record<string, string>, tenant: string, principals: MeasuredPrincipal[], seed: number, checks: Checks): Promise<LoadedRss> {
  const sidecar = await startSidecar(env);
  const client = connectBench(sidecar.address, { tenant, principal: principals[0]!.principal }, 5_000);
  try {
    const startMiB = await rssMiB(sidecar.child.pid!, "now");
    for (let pass = 0; pass < MEMORY_PASSES; pass += 1) {
      for (const p of principals) await inTurnOp(client, p, seed, checks)(pass).catch(() => {});
      await delay(MEMORY_PASS_PAUSE_MS);
    }
    return { principals: principals.length, startMiB, nowMiB: await rssMiB(sidecar.child.pid!, "now"), peakMiB: await rssMiB(sidecar.child.pid!) };
  } finally {
    client.close();
    await sidecar.stop();
  }
}

export function formatLoadedRss(r: LoadedRss, size: string): string {
  return (
    `  after start-up: ${r.startMiB.toFixed(0)} MiB; with ${r.principals} principals of ${size} recalled ${MEMORY_PASSES} times each: ` +
    `${r.nowMiB.toFixed(0)} MiB now, ${r.peakMiB.toFixed(0)} MiB peak (VmHWM)`
  );
}

/*
 * Idle: a sidecar's resident set a few seconds after it started listening,
 * for each kind of store, before it answered anything. The PGlite data
 * directory is a fresh one (the first start creates it).
 */

export interface IdleRss {
  kind: string;
  /** VmRSS after the settle, and VmHWM (the peak, start-up included). */
  nowMiB: number;
  peakMiB: number;
}

/** How long a started sidecar is left alone before its RSS is read: start-up's garbage has been collected. */
const SETTLE_MS = 3_000;

export const STORE_KINDS = {
  postgres: "PostgreSQL store",
  ephemeral: "ephemeral store (memory://)",
  dataDir: "PGlite data directory",
} as const;

export async function idleRss(databaseUrl: string, baseEnv: Record<string, string>): Promise<IdleRss[]> {
  const dir = await mkdtemp(join(tmpdir(), "recall-bench-idle-"));
  try {
    const kinds: [string, Record<string, string>][] = [
      [STORE_KINDS.postgres, { RECALL_DATABASE_URL: databaseUrl }],
      [STORE_KINDS.ephemeral, { RECALL_DATA_DIR: "memory://" }],
      [STORE_KINDS.dataDir, { RECALL_DATA_DIR: join(dir, "data") }],
    ];
    const out: IdleRss[] = [];
    for (const [kind, env] of kinds) {
      const sidecar = await startSidecar({ ...baseEnv, ...env });
      try {
        await delay(SETTLE_MS);
        out.push({ kind, nowMiB: await rssMiB(sidecar.child.pid!, "now"), peakMiB: await rssMiB(sidecar.child.pid!) });
      } finally {
        await sidecar.stop();
      }
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatIdleRss(rows: readonly IdleRss[]): string[] {
  return rows.map((r) => `  idle sidecar, ${r.kind}: ${r.nowMiB.toFixed(0)} MiB RSS ${SETTLE_MS / 1000} s after listening (${r.peakMiB.toFixed(0)} MiB peak)`);
}

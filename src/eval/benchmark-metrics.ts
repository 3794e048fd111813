import type { ProbeRow, ReopenSample, SnapshotSession } from "./benchmark.js";

/**
 * The spec's tracked metrics over the benchmark's probe rows. Pure: rows in,
 * numbers out, rounded to four decimals so the baseline is byte-stable.
 */

export const RECALL_K = 5;

export interface BenchmarkMetrics {
  probes: number;
  /** Probes that name facts the task needs (expected ids). */
  targetProbes: number;
  /** Consequential recall@5: mean share of a target probe's expected beliefs shown (not blocked) in its top 5. */
  recallAt5: number;
  /** The same over everything returned within the probe's budget. */
  recallAtBudget: number;
  /** Share of target probes with every expected belief shown. */
  allAtBudget: number;
  /** Returned and irrelevant (neither expected nor acceptable) over returned, over all probes. */
  noiseRatio: number;
  /** Forbidden beliefs returned in any form, and poisoned beliefs returned without [BLOCKED]. */
  policyFailures: { forbidden: number; poisonedUnblocked: number; total: number };
  transfer: {
    /** Probes marked as transfer cases. */
    probes: number;
    /** Carried (shown, from another project) beliefs over all probes. */
    carried: number;
    /** Carried beliefs that were relevant in the new project and rendered with their origin. */
    precision: number;
    /** Transfer probes fully answered (every expected belief shown) thanks to at least one carried belief. */
    lift: number;
  };
  /** Mean rendered tokens per recall, overall and per moment. */
  tokensPerRecall: { all: number; snapshot: number; in_turn: number; child_run: number; search: number };
  snapshot: {
    sessions: number;
    meanSize: number;
    /** Share of snapshot beliefs a probe of the session needed (the model would cite them). */
    utilization: number;
    /** In-turn results that were snapshot-eligible but not in the snapshot, summed over sessions. */
    misses: number;
  };
  cache: {
    /** Later turns of sessions that opened with a snapshot. */
    turns: number;
    /** Share of the session-open snapshot's bytes a re-open at a later turn leaves unchanged (leading bytes). */
    reopenPrefixStableShare: number;
    /** Share of those turns where a re-open gives the identical bytes. */
    reopenIdenticalShare: number;
  };
}

export function benchmarkMetrics(
  probes: readonly ProbeRow[],
  sessions: readonly SnapshotSession[],
  reopens: readonly ReopenSample[],
): BenchmarkMetrics {
  const targets = probes.filter((p) => p.hits.length + p.missed.length > 0);
  const shownTop = (p: ProbeRow, k: number) => new Set(p.returned.slice(0, k).filter((r) => !r.endsWith("!blocked")));
  const recallAt = (p: ProbeRow, k: number) => {
    const top = shownTop(p, k);
    return [...p.hits, ...p.missed].filter((e) => top.has(e)).length / (p.hits.length + p.missed.length);
  };
  const returned = sum(probes.map((p) => p.returned.length));
  const carried = probes.flatMap((p) => p.carried.map((k) => ({ k, p })));
  const goodCarried = carried.filter(({ k, p }) => !p.noise.includes(k) && !p.carriedUnattributed.includes(k));
  const transfer = probes.filter((p) => p.transfer);
  const lifted = transfer.filter((p) => p.missed.length === 0 && p.hits.length > 0 && p.hits.some((h) => p.carried.includes(h)));
  const forbidden = sum(probes.map((p) => p.forbiddenReturned.length));
  const poisonedUnblocked = sum(probes.map((p) => p.poisonedUnblocked.length));
  const tokens = (moment?: ProbeRow["moment"]) => round(mean(probes.filter((p) => !moment || p.moment === moment).map((p) => p.tokens)));
  const snapshotBeliefs = sum(sessions.map((s) => s.snapshot.length));

  return {
    probes: probes.length,
    targetProbes: targets.length,
    recallAt5: round(mean(targets.map((p) => recallAt(p, RECALL_K)))),
    recallAtBudget: round(mean(targets.map((p) => recallAt(p, Infinity)))),
    allAtBudget: round(mean(targets.map((p) => (p.missed.length === 0 ? 1 : 0)))),
    noiseRatio: round(returned === 0 ? 0 : sum(probes.map((p) => p.noise.length)) / returned),
    policyFailures: { forbidden, poisonedUnblocked, total: forbidden + poisonedUnblocked },
    transfer: {
      probes: transfer.length,
      carried: carried.length,
      precision: round(carried.length === 0 ? 0 : goodCarried.length / carried.length),
      lift: round(transfer.length === 0 ? 0 : lifted.length / transfer.length),
    },
    tokensPerRecall: { all: tokens(), snapshot: tokens("snapshot"), in_turn: tokens("in_turn"), child_run: tokens("child_run"), search: tokens("search") },
    snapshot: {
      sessions: sessions.length,
      meanSize: round(mean(sessions.map((s) => s.snapshot.length))),
      utilization: round(snapshotBeliefs === 0 ? 0 : sum(sessions.map((s) => s.used.length)) / snapshotBeliefs),
      misses: sum(sessions.map((s) => s.misses.length)),
    },
    cache: {
      turns: reopens.length,
      reopenPrefixStableShare: round(
        reopens.length === 0 ? 1 : sum(reopens.map((r) => r.stableBytes)) / Math.max(1, sum(reopens.map((r) => r.prefixBytes))),
      ),
      reopenIdenticalShare: round(reopens.length === 0 ? 1 : reopens.filter((r) => r.identical).length / reopens.length),
    },
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : sum(xs) / xs.length;
}

export function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

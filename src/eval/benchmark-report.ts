import type { BenchmarkResult } from "./benchmark.js";
import { RECALL_K } from "./benchmark-metrics.js";

/** The benchmark as plain text: the metrics, then one line per probe. */
export function formatBenchmark(r: BenchmarkResult): string {
  const m = r.metrics;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const t = (x: number) => x.toFixed(1);
  const lines = [
    `Deterministic benchmark: ${m.probes} probes (${m.targetProbes} with expected beliefs), policy ${r.policy}, fixture ${r.fixtureSha256.slice(0, 12)}`,
    `  ${`consequential recall@${RECALL_K}`.padEnd(29)}${pct(m.recallAt5)}`,
    `  consequential recall         ${pct(m.recallAtBudget)} within budget; all expected shown ${pct(m.allAtBudget)}`,
    `  noise ratio                  ${pct(m.noiseRatio)}`,
    `  policy failures              ${m.policyFailures.total} (forbidden returned ${m.policyFailures.forbidden}, poisoned unblocked ${m.policyFailures.poisonedUnblocked})`,
    `  transfer precision           ${pct(m.transfer.precision)} of ${m.transfer.carried} carried beliefs`,
    `  transfer lift                ${pct(m.transfer.lift)} of ${m.transfer.probes} transfer probes`,
    `  tokens per recall            ${t(m.tokensPerRecall.all)} (snapshot ${t(m.tokensPerRecall.snapshot)}, in-turn ${t(m.tokensPerRecall.in_turn)}, child run ${t(m.tokensPerRecall.child_run)}, search ${t(m.tokensPerRecall.search)})`,
    `  snapshot                     ${m.snapshot.sessions} sessions, mean ${m.snapshot.meanSize} beliefs, utilization ${pct(m.snapshot.utilization)}, misses ${m.snapshot.misses}`,
    `  cache (re-open at ${m.cache.turns} turns)  prefix-stable share ${pct(m.cache.reopenPrefixStableShare)}, identical ${pct(m.cache.reopenIdenticalShare)}`,
    "",
    "probe                        moment     hits/exp  noise  fail  returned",
  ];
  for (const p of r.probes) {
    const expected = p.hits.length + p.missed.length;
    const fail = p.forbiddenReturned.length + p.poisonedUnblocked.length;
    const flags = [
      p.missed.length > 0 ? `missed ${p.missed.join(",")}` : "",
      fail > 0 ? `FAIL ${[...p.forbiddenReturned, ...p.poisonedUnblocked].join(",")}` : "",
      p.corrections.length > 0 ? `corrected ${p.corrections.join(",")}` : "",
    ].filter((f) => f !== "");
    lines.push(
      `${p.id.padEnd(28)} ${p.moment.padEnd(10)} ${`${p.hits.length}/${expected}`.padEnd(9)} ${String(p.noise.length).padEnd(6)} ${String(fail).padEnd(5)} ${p.returned.join(" ")}${flags.length > 0 ? `  [${flags.join("; ")}]` : ""}`,
    );
  }
  return lines.join("\n");
}

import { lintSource } from "@secretlint/core";
import { secretLintProfiler } from "@secretlint/profiler";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";

/**
 * The maintained secret ruleset: secretlint's recommended preset (cloud,
 * payment, chat, VCS, AI-provider, database and private-key formats, kept
 * current by its authors), run through secretlint's own engine. Our rules
 * (secret-rules.ts) add what it leaves out.
 *
 * The engine is asynchronous and has a fixed cost per call (about 0.5 ms on
 * this project's machine) and a small one per statement (about 4 µs), so a
 * recall scans all of its statements in one call: they are joined with a
 * separator no rule matches across, and each finding is attributed by its
 * offset.
 */

const SEPARATOR = "\n\u0000\n";

// secretlint 12 profiles every lint whether or not anyone reads it: about 56 performance.mark()
// calls per scan, kept in the process's performance timeline for ever, plus an observer that scans
// every mark seen so far on each new one. In a sidecar that scans on every recall, that was most of
// the CPU of a recall after a few minutes, and a heap that only grows. Upstream made profiling opt-in
// in 13.x (secretlint/secretlint#1673), which needs Node 22; until then the marks are switched off.
secretLintProfiler.mark = () => {};

const CONFIG = {
  rules: [
    {
      id: recommended.meta.id,
      rule: recommended,
      rules: [
        // Access key ids too, not only secret access keys.
        { id: "@secretlint/secretlint-rule-aws", options: { enableIDScanRule: true } },
        // "secretlint-disable" comments are for source files; in a statement they would hide a key.
        { id: "@secretlint/secretlint-rule-filter-comments", disabled: true },
      ],
    },
  ],
} as Parameters<typeof lintSource>[0]["options"]["config"];

/** For each text, the id of the first ruleset rule that found a secret in it, or null. */
export async function rulesetSecrets(texts: readonly string[]): Promise<(string | null)[]> {
  const found: (string | null)[] = texts.map(() => null);
  if (texts.length === 0) return found;
  const starts: number[] = [];
  let offset = 0;
  for (const t of texts) {
    starts.push(offset);
    offset += t.length + SEPARATOR.length;
  }
  const result = await lintSource({
    source: { filePath: "memory/statements.txt", content: texts.join(SEPARATOR), ext: ".txt", contentType: "text" },
    options: { config: CONFIG, noPhysicFilePath: true },
  });
  for (const m of result.messages) {
    const i = lastAtOrBefore(starts, m.range[0]);
    if (found[i] === null) found[i] = m.ruleId;
  }
  return found;
}

function lastAtOrBefore(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sorted[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

import { beforeAll, describe, expect, it } from "vitest";
import type { SafetyFinding } from "../../src/domain/safety-finding.js";
import { explainStatements } from "../../src/recall/safety/safety.js";
import { loadCorpus, type CorpusCase } from "../support/safety-corpus.js";

/**
 * The scanner on its labelled corpus: precision and recall over every case,
 * then per family and per variant. The targets are the spec's hard gate:
 * no benign statement withheld, every attack and every secret withheld,
 * each for its own reason. The table printed here is docs/safety.md's.
 */

interface Scored extends CorpusCase {
  finding: SafetyFinding | null;
}

const expectedReason = (c: CorpusCase) => (c.label === "benign" ? null : c.label);

describe("safety scan on the labelled corpus", () => {
  let scored: Scored[];

  beforeAll(async () => {
    const cases = loadCorpus();
    const findings = await explainStatements(cases.map((c) => ({ statement: c.text, beliefType: "preference" })));
    scored = cases.map((c, i) => ({ ...c, finding: findings[i]! }));
    console.log(report(scored));
  });

  it("has a few hundred cases: attacks of every family in every variant, and look-alike benign statements", () => {
    expect(scored.length).toBeGreaterThan(300);
    expect(new Set(scored.filter((c) => c.label === "injection").map((c) => c.family)).size).toBeGreaterThanOrEqual(9);
    expect(scored.filter((c) => c.label === "benign").length).toBeGreaterThan(300);
  });

  it("withholds no benign statement", () => {
    const blocked = scored.filter((c) => c.label === "benign" && c.finding !== null);
    expect(blocked.map((c) => `${c.variant} ${c.finding!.rule}: ${c.text}`)).toEqual([]);
  });

  it("withholds every attack as an injection and every credential as a secret", () => {
    const missed = scored.filter((c) => c.label !== "benign" && c.finding?.reason !== expectedReason(c));
    expect(missed.map((c) => `${c.label}/${c.family} ${c.variant} → ${c.finding?.reason ?? "passed"}: ${JSON.stringify(c.text)}`)).toEqual([]);
  });
});

/** A markdown table: cases, withheld, recall (attacks) or false positives (benign), per family and variant. */
function report(rows: readonly Scored[]): string {
  const positives = rows.filter((r) => r.label !== "benign");
  const tp = positives.filter((r) => r.finding?.reason === expectedReason(r)).length;
  const fp = rows.filter((r) => r.label === "benign" && r.finding !== null).length;
  const lines = [
    `safety corpus: ${rows.length} cases, precision ${pct(tp, tp + fp)}, recall ${pct(tp, positives.length)}, benign withheld ${fp}/${rows.length - positives.length}`,
    "| label | family | cases | withheld | share |",
    "|---|---|---:|---:|---:|",
  ];
  const groups = new Map<string, Scored[]>();
  for (const r of rows) {
    const key = `${r.label}|${r.family}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) {
    const [label, family] = key.split("|");
    const withheld = group.filter((r) => r.finding !== null).length;
    lines.push(`| ${label} | ${family} | ${group.length} | ${withheld} | ${pct(withheld, group.length)} |`);
  }
  for (const variant of ["plain", "zero-width", "homoglyph", "base64", "hex"]) {
    const attacks = rows.filter((r) => r.label !== "benign" && r.variant === variant);
    if (attacks.length > 0) lines.push(`| variant | ${variant} | ${attacks.length} | ${attacks.filter((r) => r.finding !== null).length} | ${pct(attacks.filter((r) => r.finding !== null).length, attacks.length)} |`);
  }
  return lines.join("\n");
}

function pct(n: number, d: number): string {
  return d === 0 ? "n/a" : `${((100 * n) / d).toFixed(1)}%`;
}

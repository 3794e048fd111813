/**
 * Step 7: the safety pass. Memory is data, never instructions: a statement
 * that tries to instruct the model, forge the block's structure, or carries a
 * credential is withheld per item, its id kept so the user can inspect and
 * correct it. One bad belief never suppresses the rest of the block.
 *
 * - private reasoning: belief types that hold the agent's own reasoning or
 *   credentials are never rendered, whatever they say.
 * - secrets: the maintained ruleset (secret-ruleset.ts) and our own rules
 *   (secret-rules.ts), on the statement as stored, without its invisible
 *   characters, and on every readable payload it encodes.
 * - injection: the rules by family (injection-rules.ts) on the folded text
 *   (text-fold.ts: NFKC, no invisible characters, Latin skeleton of
 *   look-alike letters, single spaces), and on every payload decoded from
 *   base64, hex or percent-encoding (encoded-payloads.ts).
 *
 * The labelled corpus (test/fixtures/safety/corpus.json) and its test
 * report precision and recall per family; docs/safety.md carries the figures.
 */

import { decodedPayloads } from "./encoded-payloads.js";
import { INJECTION_RULES } from "./injection-rules.js";
import { SECRET_RULES } from "./secret-rules.js";
import { StringPairMemo } from "../../domain/string-memo.js";
import { rulesetSecrets } from "./secret-ruleset.js";
import { flatten, foldedViews } from "./text-fold.js";
import type { WithRowMemo } from "../../ports/row-memo.js";
import type { SafetyFinding, SafetyVerdict } from "../../domain/safety-finding.js";


const PRIVATE_TYPES: ReadonlySet<string> = new Set(["private_reasoning", "chain_of_thought", "credential", "secret"]);

const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;

/** The statement as stored, and without invisible characters (a key split by zero-width spaces still leaks). */
function rawViews(text: string): string[] {
  const visible = text.normalize("NFKC").replace(INVISIBLE, "");
  return visible === text ? [text] : [text, visible];
}

function ownSecret(texts: readonly string[]): string | null {
  for (const t of texts) for (const r of SECRET_RULES) if (r.pattern.test(t)) return r.family;
  return null;
}

function injection(text: string): string | null {
  for (const folded of foldedViews(text)) {
    // Line starts matter to some rules, a sentence split over lines to others: both readings when there are lines.
    const flat = flatten(folded);
    for (const r of INJECTION_RULES) if (r.pattern.test(folded) || (flat !== folded && r.pattern.test(flat))) return r.family;
  }
  return null;
}

/**
 * The synchronous part of the scan (everything but the ruleset): private
 * types, our secret rules, the injection rules; each also on the payloads the
 * statement encodes. Null when the statement may be rendered as far as these go.
 */
export function explainStatement(statement: string, beliefType: string): SafetyFinding | null {
  if (PRIVATE_TYPES.has(beliefType)) return { reason: "private", rule: "type" };
  const views = rawViews(statement);
  const decoded = views.flatMap((v) => decodedPayloads(v));
  const secret = ownSecret([...views, ...decoded]);
  if (secret !== null) return { reason: "secret", rule: secret };
  const direct = injection(statement);
  if (direct !== null) return { reason: "injection", rule: direct };
  for (const d of decoded) {
    const hidden = injection(d);
    if (hidden !== null) return { reason: "injection", rule: `encoded/${hidden}` };
  }
  return null;
}

export function scanStatement(statement: string, beliefType: string): SafetyVerdict {
  return verdictOf(explainStatement(statement, beliefType));
}

/** A statement to scan, with its row's memo when its source keeps one (ports/row-memo.ts). */
export interface ScannedItem extends WithRowMemo {
  statement: string;
  beliefType: string;
}

/**
 * The whole scan of a recall's statements, the ruleset included: one ruleset
 * call for all of them. The scan is a pure function of (type, statement), and
 * a recall asks it of a few hundred candidates, mostly the same ones as the
 * recall before (one principal's beliefs): findings are kept, with the row
 * when its source keeps a memo and in a bounded table, and only statements
 * not seen yet are scanned.
 */
export async function explainStatements(items: readonly ScannedItem[]): Promise<(SafetyFinding | null)[]> {
  const findings: (SafetyFinding | null | undefined)[] = items.map((i) => (i.memo?.finding !== undefined ? i.memo.finding : SCANNED.get(i.beliefType, i.statement)));
  const fresh = items.flatMap((_, i) => (findings[i] === undefined ? [i] : []));
  for (const i of fresh) findings[i] = explainStatement(items[i]!.statement, items[i]!.beliefType);
  // The ruleset reads every view of the statements the rules above let through.
  const views: { item: number; text: string }[] = [];
  for (const item of fresh) {
    if (findings[item] !== null) continue;
    const raw = rawViews(items[item]!.statement);
    for (const text of [...raw, ...raw.flatMap((v) => decodedPayloads(v))]) views.push({ item, text });
  }
  const hits = views.length === 0 ? [] : await rulesetSecrets(views.map((v) => v.text));
  hits.forEach((ruleId, i) => {
    const item = views[i]!.item;
    if (ruleId !== null && findings[item] === null) findings[item] = { reason: "secret", rule: ruleId };
  });
  for (const i of fresh) SCANNED.set(items[i]!.beliefType, items[i]!.statement, findings[i]!);
  items.forEach((item, i) => {
    if (item.memo) item.memo.finding = findings[i]!;
  });
  return findings as (SafetyFinding | null)[];
}

// Findings by (type, statement): at most SCANNED_MAX statements, then it starts over.
const SCANNED_MAX = 131_072;
const SCANNED = new StringPairMemo<SafetyFinding | null>(SCANNED_MAX);

/**
 * Scans statements ahead of the recalls that will ask (a principal's whole
 * index, once loaded), in small slices that yield to the event loop between
 * them, so those recalls find their findings kept. Findings are what a recall
 * would compute; nothing else changes. Errors are the caller's to log.
 */
export async function prescanStatements(items: readonly { statement: string; beliefType: string }[], slice = 100): Promise<void> {
  for (let i = 0; i < items.length && i < SCANNED_MAX / 2; i += slice) {
    await explainStatements(items.slice(i, i + slice));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

export async function scanStatements(items: readonly ScannedItem[]): Promise<SafetyVerdict[]> {
  return (await explainStatements(items)).map(verdictOf);
}

function verdictOf(f: SafetyFinding | null): SafetyVerdict {
  return f === null ? { ok: true } : { ok: false, reason: f.reason };
}

/** The placeholder text that replaces a withheld statement in the block. */
export function withheldText(reason: "injection" | "secret" | "private"): string {
  switch (reason) {
    case "injection":
      return "[BLOCKED] withheld: failed injection scan.";
    case "secret":
      return "[BLOCKED] withheld: contains a credential.";
    case "private":
      return "[BLOCKED] withheld: private reasoning.";
  }
}

/**
 * The event log is raw conversation, so the belief scan's injection rules
 * would withhold ordinary history ("from now on you should use tabs" is a
 * user's instruction that really happened). Episodes are scanned for what
 * must never be rendered anywhere: credentials, private reasoning, and markup
 * that would forge the block, a citation or the conversation.
 */
const EPISODE_FORGERY_PATTERNS: readonly RegExp[] = [
  /<\/?\s*(episodes|memory|system|assistant|instructions?|tool|im_start|im_end)\b[^>]*>/i,
  /<\|(im_start|im_end|system|endoftext|begin_of_text|start_header_id)\|?>/i,
  /<<\s*\/?\s*SYS\s*>>/i,
  /\[\s*(INST|\/INST|SYSTEM)\s*\]/i,
  /\[(e|m):[0-9a-f]{4,}\]/i,
  /\[BLOCKED\]/i,
];

const PRIVATE_EPISODE_KINDS: ReadonlySet<string> = new Set(["private_reasoning", "chain_of_thought", "reasoning", "credential", "secret"]);

export function scanEpisode(content: string, kind: string): SafetyVerdict {
  if (PRIVATE_EPISODE_KINDS.has(kind.toLowerCase())) return { ok: false, reason: "private" };
  if (ownSecret(rawViews(content)) !== null) return { ok: false, reason: "secret" };
  const forged = foldedViews(content).some((v) => EPISODE_FORGERY_PATTERNS.some((re) => re.test(v)));
  return forged ? { ok: false, reason: "injection" } : { ok: true };
}

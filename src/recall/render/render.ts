import type { Authority, ConfidenceBand } from "../../domain/model.js";
import { EIGHT_DIGITS, shortIdsFor, type ShortIds } from "./short-ids.js";
import { countTokens } from "./tokens.js";

/**
 * Step 8b, render: the deterministic, trust-labelled memory block.
 *
 *   <memory as_of="2026-07-24T09:00:00Z" policy="retrieval@6">
 *     [m:8f21a0c3] Andy prefers concise prose-first writing.  (user-stated, high)
 *     [m:7ea51c2d] (learned in atlas) Deploys are gated on CI.  (inferred, low)
 *     [m:0d3e9a11] [BLOCKED] withheld: failed injection scan.
 *   </memory>
 *
 * No volatile fields: the only timestamp is the fixed as_of, bands replace
 * floats, and lines come in the order given (the caller sorts by score desc,
 * belief_id asc). The same lines always give the same bytes.
 */

export interface RenderLine {
  beliefId: string;
  statement: string;
  authority: Authority;
  band: ConfidenceBand;
  /** Set when carried outside its origin project. */
  learnedIn: string | null;
  conflictsWith: readonly string[];
  /** Set when withheld: the placeholder text replaces the statement. */
  withheld: string | null;
}

const AUTHORITY_LABEL: Record<Authority, string> = { user: "user-stated", affirmed: "affirmed", inferred: "inferred" };

export { shortId } from "./short-ids.js";

/** RFC 3339 in UTC at second precision. */
export function formatAsOf(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** One line; `ids` are the block's short ids (eight digits unless two of its ids collide). */
export function renderLine(line: RenderLine, ids: ShortIds = EIGHT_DIGITS): string {
  const id = `[${ids(line.beliefId)}]`;
  if (line.withheld !== null) return `  ${id} ${line.withheld}`;
  const origin = line.learnedIn !== null ? `(learned in ${oneLine(line.learnedIn)}) ` : "";
  const conflicts = line.conflictsWith.length > 0 ? ` conflicts=${line.conflictsWith.map((c) => `[${ids(c)}]`).join(",")}` : "";
  return `  ${id} ${origin}${oneLine(line.statement)}  (${AUTHORITY_LABEL[line.authority]}, ${line.band})${conflicts}`;
}

/**
 * A query with a transaction time (known_at) renders it beside as_of, so the
 * block says which knowledge it shows; without one the header is unchanged.
 */
export function renderHeader(asOf: Date | null, policy: string, knownAt: Date | null = null): string {
  // No as_of: the query had none and the principal was never written, so no time pins the block.
  const at = asOf ? ` as_of="${formatAsOf(asOf)}"` : "";
  const known = knownAt ? ` known_at="${formatAsOf(knownAt)}"` : "";
  return `<memory${at}${known} policy="${policy}">`;
}

export const RENDER_FOOTER = "</memory>";

export function renderBlock(asOf: Date | null, policy: string, lines: readonly RenderLine[], knownAt: Date | null = null): string {
  const ids = blockShortIds(lines);
  return joinBlock(renderHeader(asOf, policy, knownAt), lines.map((line) => renderLine(line, ids)));
}

/** The short ids of a block of these lines, with any other ids it names (its corrections'). */
export function blockShortIds(lines: readonly RenderLine[], others: readonly string[] = []): ShortIds {
  return shortIdsFor([...lines.flatMap((l) => [l.beliefId, ...l.conflictsWith]), ...others]);
}

/**
 * The same block from lines already rendered (renderLine), and its token
 * count: the count of the whole text, summed from its parts'. No token spans
 * a newline (tokens.ts counts no whitespace), and a line's count is
 * remembered where the whole block's would be made again each recall.
 */
export function renderedBlock(asOf: Date | null, policy: string, lineTexts: readonly string[], knownAt: Date | null = null): { text: string; tokens: number } {
  const header = renderHeader(asOf, policy, knownAt);
  let tokens = countTokens(header) + countTokens(RENDER_FOOTER);
  for (const line of lineTexts) tokens += countTokens(line);
  return { text: joinBlock(header, lineTexts), tokens };
}

function joinBlock(header: string, lineTexts: readonly string[]): string {
  return [header, ...lineTexts, RENDER_FOOTER].join("\n") + "\n";
}

/** Statements are one line in the block: a newline could otherwise forge a line of its own. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

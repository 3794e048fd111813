import type { Episode } from "../domain/model.js";
import { formatAsOf } from "./render/render.js";
import { scanEpisode, withheldText } from "./safety/safety.js";
import { countTokens } from "./render/tokens.js";

/**
 * The episodic path (memory.recall_episodes): "what happened", not "what is
 * true". Scoped by session and/or time range, ordered by (occurred_at,
 * sequence, episode_id), not deduplicated, paged, with its own budget.
 * Archival episodes (the expensive tier) come only when asked and draw on a
 * second, smaller budget as well. Never run automatically: Recall only
 * advises it (escalation.ts).
 *
 * Pure: the page is assembled and rendered from rows the store returned.
 */

export const EPISODE_POLICY = Object.freeze({
  version: "episodes@1",
  tool: "memory.recall_episodes@1",
  pageSize: Object.freeze({ default: 50, max: 500 }),
  /** Tokens of the page's rendered block. */
  budgetTokens: Object.freeze({ default: 4000, min: 64, max: 16_000 }),
  /** Tokens of the archival lines within a page: smaller, because archival recall is the expensive tier. */
  archivalBudgetTokens: Object.freeze({ default: 1500, min: 64, max: 4000 }),
});

/** The effective scope and limits of one RecallEpisodes page. */
export interface EpisodePageQuery {
  sessionId: string | null;
  startTime: Date | null;
  endTime: Date | null;
  includeArchival: boolean;
  pageSize: number;
  budgetTokens: number;
  archivalBudgetTokens: number;
}

/** Resolves 0 ("server default") and caps; the archival budget never exceeds the page budget. */
export function episodeBudgets(requested: { budgetTokens: number; archivalBudgetTokens: number }): {
  budgetTokens: number;
  archivalBudgetTokens: number;
} {
  const { budgetTokens: b, archivalBudgetTokens: a } = EPISODE_POLICY;
  const budgetTokens = Math.min(requested.budgetTokens || b.default, b.max);
  const archivalBudgetTokens = Math.min(requested.archivalBudgetTokens || a.default, a.max, budgetTokens);
  return { budgetTokens, archivalBudgetTokens };
}

export interface PageEpisode {
  /** The episode as returned: content emptied when withheld, shortened when clipped. */
  episode: Episode;
  withheld: boolean;
  clipped: boolean;
  line: string;
}

export interface EpisodePage {
  episodes: PageEpisode[];
  rendered: string;
  tokens: number;
  /** A budget cut the page short or clipped an episode. */
  truncated: boolean;
  /** More episodes follow (a budget or the page size ended the page). */
  more: boolean;
}

const CLIPPED = " …[clipped]";
export const EPISODES_FOOTER = "</episodes>";

/** The cited form of an episode id: the first eight hex digits. */
export function shortEpisodeId(episodeId: string): string {
  return `e:${episodeId.replace(/-/g, "").slice(0, 8)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function attr(text: string): string {
  return oneLine(text).replace(/[&"<>]/g, (c) => ({ "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;" })[c]!);
}

/** The header names the scope, never the wall clock, so a page renders the same bytes every time. */
export function renderEpisodesHeader(q: Pick<EpisodePageQuery, "sessionId" | "startTime" | "endTime" | "includeArchival">): string {
  const parts = [
    q.sessionId !== null ? ` session="${attr(q.sessionId)}"` : "",
    q.startTime ? ` from="${formatAsOf(q.startTime)}"` : "",
    q.endTime ? ` to="${formatAsOf(q.endTime)}"` : "",
    q.includeArchival ? ` archival="true"` : "",
  ];
  return `<episodes${parts.join("")} policy="${EPISODE_POLICY.version}">`;
}

/**
 *   [e:1a2b3c4d] 2026-07-21T14:03:00Z session=s-41 user message: We go with Postgres.
 *   [e:5e6f7a8b] 2026-03-02T10:00:00Z session=s-7 archival agent decision: [BLOCKED] withheld: contains a credential.
 */
export function renderEpisodeLine(e: Episode, body: string): string {
  const who = [e.actor, e.kind].map(oneLine).filter((s) => s !== "").join(" ");
  const archival = e.archival ? " archival" : "";
  return `  [${shortEpisodeId(e.episodeId)}] ${formatAsOf(e.occurredAt)} session=${oneLine(e.sessionId).replace(/ /g, "_")}${archival}${who ? ` ${who}` : ""}: ${body}`;
}

/**
 * Fills a page in order until the page size, the page budget or (for
 * archival episodes) the archival budget would be exceeded. Ordered and
 * contiguous: the page stops at the first episode that does not fit, so the
 * keyset cursor never skips one. The first episode always makes the page, so
 * paging cannot stall: if it alone exceeds the budget its content is clipped
 * to fit. Withheld episodes (safety pass) keep their place as placeholders.
 */
export function assembleEpisodePage(rows: readonly Episode[], q: EpisodePageQuery): EpisodePage {
  const header = renderEpisodesHeader(q);
  const frame = countTokens(header) + countTokens(EPISODES_FOOTER) + 2;
  const out: PageEpisode[] = [];
  let tokens = frame;
  let archivalTokens = 0;
  let truncated = false;
  let stoppedEarly = false;
  for (const row of rows.slice(0, q.pageSize)) {
    const verdict = scanEpisode(row.content, row.kind);
    const withheld = !verdict.ok;
    const body = verdict.ok ? oneLine(row.content) : withheldText(verdict.reason);
    let episode: Episode = withheld ? { ...row, content: "" } : row;
    let line = renderEpisodeLine(row, body);
    let cost = countTokens(line) + 1;
    const fits = tokens + cost <= q.budgetTokens && (!row.archival || archivalTokens + cost <= q.archivalBudgetTokens);
    let clipped = false;
    if (!fits) {
      if (out.length > 0) {
        truncated = true;
        stoppedEarly = true;
        break;
      }
      const room = Math.min(q.budgetTokens - frame, row.archival ? q.archivalBudgetTokens : Infinity);
      const kept = clipToFit(row, body, room);
      episode = { ...episode, content: withheld ? "" : kept };
      line = renderEpisodeLine(row, kept + CLIPPED);
      cost = countTokens(line) + 1;
      clipped = true;
      truncated = true;
    }
    out.push({ episode, withheld, clipped, line });
    tokens += cost;
    if (row.archival) archivalTokens += cost;
  }
  const rendered = [header, ...out.map((e) => e.line), EPISODES_FOOTER].join("\n") + "\n";
  return {
    episodes: out,
    rendered,
    tokens: countTokens(rendered),
    truncated,
    more: stoppedEarly || rows.length > q.pageSize,
  };
}

/** The longest prefix of `body` whose clipped line costs at most `room` tokens ("" when nothing fits). */
function clipToFit(e: Episode, body: string, room: number): string {
  const cost = (prefix: string) => countTokens(renderEpisodeLine(e, prefix + CLIPPED)) + 1;
  let lo = 0;
  let hi = body.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (cost(body.slice(0, mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  return body.slice(0, lo).trimEnd();
}

import type { Principal } from "../../domain/model.js";
import type { LexiconDelta } from "./lexicon-stats.js";
import type { SqlClient } from "../sql-client.js";
import { SqlParams } from "../sql-params.js";

/**
 * The source-context field of a belief's lexical index (lex_tsv labels C
 * and D, sql/0005_lexicon.sql): the text of the episodes it cites, and of the
 * episodes within SOURCE_NEIGHBOURS turns of them in the same session.
 * Searched, never rendered: a belief is shown by its statement alone.
 *
 * Kept current at write time whichever arrives first: a belief written after
 * its episodes gets its context at once; episodes appended after the beliefs
 * that cite them (or after beliefs citing their neighbours) refresh those
 * beliefs. An episode more sensitive than the belief never enters its index,
 * so ranking cannot become a side channel for text the belief's reader may
 * not see.
 */

/** Turns either side of a source episode that count as its context. */
export const SOURCE_NEIGHBOURS = 2;

/** Which beliefs to refresh: these ids, or those citing any episode of these sessions. */
export type ContextSelector = { beliefIds: readonly string[] } | { sessionIds: readonly string[] };

/**
 * Recomputes context_tsv for the selected beliefs of one principal, adding
 * the change of their lexical documents to `lexicon`; returns how many rows changed.
 */
export async function refreshSourceContext(
  tx: SqlClient,
  p: Principal,
  selector: ContextSelector,
  lexicon: LexiconDelta,
): Promise<number> {
  const params = new SqlParams();
  const tenant = params.add(p.tenantId);
  const principal = params.add(p.principalId);
  const selected =
    "beliefIds" in selector
      ? `b.belief_id = ANY(${params.add(selector.beliefIds)}::uuid[])`
      : `b.source_episode_ids && ARRAY(SELECT x.episode_id FROM episodes x
           WHERE x.tenant_id = ${tenant} AND x.principal_id = ${principal}
             AND x.session_id = ANY(${params.add(selector.sessionIds)}::text[]))`;
  if (("beliefIds" in selector ? selector.beliefIds : selector.sessionIds).length === 0) return 0;
  const rows = await tx.query(
    `WITH sel AS (
       SELECT b.belief_id, b.source_episode_ids, b.sensitivity, b.lex_lengths FROM beliefs b
       WHERE b.tenant_id = ${tenant} AND b.principal_id = ${principal} AND ${selected}
     ),
     ${nearEpisodesSql(tenant, principal, params)},
     ctx AS (
       SELECT sel.belief_id, sel.lex_lengths AS before,
         COALESCE(setweight(to_tsvector('english',
           string_agg(n.content, ' ' ORDER BY n.session_id, n.rn) FILTER (WHERE n.is_source)), 'C'), ''::tsvector)
         || COALESCE(setweight(to_tsvector('english',
           string_agg(n.content, ' ' ORDER BY n.session_id, n.rn) FILTER (WHERE NOT n.is_source)), 'D'), ''::tsvector)
           AS tsv
       FROM sel LEFT JOIN near n ON n.belief_id = sel.belief_id
       GROUP BY sel.belief_id, sel.lex_lengths
     )
     UPDATE beliefs b SET context_tsv = ctx.tsv FROM ctx
     WHERE b.tenant_id = ${tenant} AND b.principal_id = ${principal} AND b.belief_id = ctx.belief_id
       AND b.context_tsv IS DISTINCT FROM ctx.tsv
     RETURNING ctx.before::int[] AS lengths_before, b.lex_lengths::int[] AS lengths_after`,
    params.values,
  );
  lexicon.changeRows(rows);
  return rows.length;
}

/**
 * The CTEs `ranked` and `near` over a CTE `sel` (belief_id, source_episode_ids,
 * sensitivity): each selected belief's source episodes and their neighbours
 * within SOURCE_NEIGHBOURS turns, no more sensitive than the belief. The
 * lexical field and the embedded document read the same episodes.
 */
function nearEpisodesSql(tenant: string, principal: string, params: SqlParams): string {
  return `ranked AS (
       SELECT e.episode_id, e.session_id, e.content, e.sensitivity,
         row_number() OVER (PARTITION BY e.session_id ORDER BY e.occurred_at, e.sequence, e.episode_id) AS rn
       FROM episodes e
       WHERE e.tenant_id = ${tenant} AND e.principal_id = ${principal}
         AND e.session_id IN (
           SELECT x.session_id FROM episodes x JOIN sel ON x.episode_id = ANY(sel.source_episode_ids)
           WHERE x.tenant_id = ${tenant} AND x.principal_id = ${principal})
     ),
     near AS (
       SELECT DISTINCT sel.belief_id, r.session_id, r.rn, r.content, r.episode_id = ANY(sel.source_episode_ids) AS is_source
       FROM sel
       JOIN ranked s ON s.episode_id = ANY(sel.source_episode_ids)
       JOIN ranked r ON r.session_id = s.session_id AND abs(r.rn - s.rn) <= ${params.add(SOURCE_NEIGHBOURS)}
       WHERE r.sensitivity <= sel.sensitivity
     )`;
}

/** A belief's source context as text: its source episodes' and their neighbours', in session order. */
export interface SourceContextText {
  source: string;
  neighbours: string;
}

/**
 * The text behind context_tsv for these beliefs of one principal (the
 * semantic arm embeds what the lexical arm indexes). A belief citing no
 * episode, or only more sensitive ones, has empty texts.
 */
export async function sourceContextTexts(db: SqlClient, p: Principal, beliefIds: readonly string[]): Promise<Map<string, SourceContextText>> {
  const out = new Map<string, SourceContextText>();
  if (beliefIds.length === 0) return out;
  const params = new SqlParams();
  const tenant = params.add(p.tenantId);
  const principal = params.add(p.principalId);
  const rows = await db.query<{ belief_id: string; source: string | null; neighbours: string | null }>(
    `WITH sel AS (
       SELECT b.belief_id, b.source_episode_ids, b.sensitivity FROM beliefs b
       WHERE b.tenant_id = ${tenant} AND b.principal_id = ${principal} AND b.belief_id = ANY(${params.add(beliefIds)}::uuid[])
     ),
     ${nearEpisodesSql(tenant, principal, params)}
     SELECT n.belief_id::text AS belief_id,
       string_agg(n.content, ' ' ORDER BY n.session_id, n.rn) FILTER (WHERE n.is_source) AS source,
       string_agg(n.content, ' ' ORDER BY n.session_id, n.rn) FILTER (WHERE NOT n.is_source) AS neighbours
     FROM near n GROUP BY n.belief_id`,
    params.values,
  );
  for (const r of rows) out.set(r.belief_id, { source: r.source ?? "", neighbours: r.neighbours ?? "" });
  return out;
}

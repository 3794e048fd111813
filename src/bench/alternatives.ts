import MiniSearch from "minisearch";
import { lexicalTerms } from "../recall/query-former.js";
import type { Row } from "../store/sql-client.js";
import { forcedCollection, retainedNow } from "./index-bytes.js";
import { runLoad } from "./load.js";
import { scenarioInputs, type MeasuredPrincipal } from "./scenarios.js";
import { medianOfRounds, type LatencySummary } from "./stats.js";

/**
 * "What a user would pick instead": the same principal's statements searched
 * by the obvious alternatives to a sidecar, each asked for a top 12 by the
 * in-turn scenario's query texts, timed in the bench's own process (no gRPC,
 * no ranking beyond the library's or PostgreSQL's own score, no hard filter
 * beyond the principal's active rows, no rendering).
 *
 * - MiniSearch (an in-process full-text library: BM25+, no dependencies),
 *   its index built once over the principal's statements.
 * - PostgreSQL full text: ts_rank_cd over the stored tsvector, top 12.
 */

export interface AlternativeResult {
  name: string;
  summary: LatencySummary;
  note: string;
}

/** The top this many, as an in-turn block holds about a dozen beliefs. */
const TOP = 12;

/** ts_rank_cd top 12 of the principal's active beliefs matching any of the query's terms. */
export const TS_RANK_CD_SQL = `SELECT b.belief_id, b.statement, ts_rank_cd(b.lex_tsv, q.query) AS score
  FROM beliefs b, to_tsquery('english', $3) AS q(query)
  WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.status = 'active' AND b.lex_tsv @@ q.query
  ORDER BY score DESC, b.belief_id
  LIMIT ${TOP}`;

type Query = (text: string, params: unknown[]) => Promise<readonly Row[]>;

export async function measureAlternatives(
  query: Query,
  tenant: string,
  who: MeasuredPrincipal,
  seed: number,
  load: { iterations: number; warmup: number; rounds: number },
): Promise<{ results: AlternativeResult[]; lines: string[] }> {
  const { queries } = scenarioInputs(seed);
  const gc = forcedCollection();
  const statements = await query(
    "SELECT belief_id::text AS id, statement FROM beliefs WHERE tenant_id = $1 AND principal_id = $2 AND status = 'active'",
    [tenant, who.principal],
  );
  const before = retainedNow(gc);
  const started = performance.now();
  const mini = new MiniSearch<{ id: string; statement: string }>({ fields: ["statement"], storeFields: [] });
  mini.addAll(statements as unknown as { id: string; statement: string }[]);
  const buildMs = performance.now() - started;
  const bytes = retainedNow(gc) - before;

  const rounds = async (op: (seq: number) => Promise<void>) => {
    const summaries: LatencySummary[] = [];
    for (let r = 0; r < load.rounds; r += 1) summaries.push((await runLoad(op, { iterations: load.iterations, concurrency: 1, warmup: load.warmup })).summary);
    return summaries;
  };
  const miniRounds = await rounds(async (seq) => void mini.search(queries[seq % queries.length]!.text).slice(0, TOP));
  const pgRounds = await rounds(async (seq) => {
    const terms = lexicalTerms(queries[seq % queries.length]!.text);
    await query(TS_RANK_CD_SQL, [tenant, who.principal, terms.join(" | ")]);
  });
  const results = [
    { name: "MiniSearch 7.2.0, top 12", summary: medianOfRounds(miniRounds), note: "in process, no gRPC" },
    { name: "PostgreSQL ts_rank_cd, top 12", summary: medianOfRounds(pgRounds), note: "postgres.js, no sidecar" },
  ];
  mini.removeAll();
  return {
    results,
    lines: [
      `  MiniSearch index of the ${statements.length.toLocaleString("en-US")} active statements: built in ${buildMs.toFixed(0)} ms, ` +
        `${(bytes / 1024 ** 2).toFixed(1)} MiB retained, ${(bytes / Math.max(1, statements.length)).toFixed(0)} bytes per statement`,
    ],
  };
}

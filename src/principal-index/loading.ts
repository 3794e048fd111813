import type { Principal, StoredBelief } from "../domain/model.js";
import { BELIEF_COLUMNS, beliefFromRow } from "../store/beliefs/belief-rows.js";
import { currentVectorJoin, vectorFromBinary } from "../store/candidates/semantic-store.js";
import type { QueryOptions, Row, SqlClient } from "../store/sql-client.js";
import { parseTsvector, type TsEntry } from "./tsvector.js";

/**
 * Loading a principal's index, and its delta: every statement's WHERE
 * carries the tenant and principal predicates, so an index can only ever
 * hold its own principal's rows. What is read is everything the arms, the
 * hard filter and the renderer use: every belief row (live and historical
 * queries alike), its lexical document as PostgreSQL computed it at write
 * time, its rejections, the persona-held set, the aliases and the head; and,
 * with the semantic arm on, its current vector (joined into the same read, so
 * a row and its vector are always of the same document).
 */

/** The stored embedder id whose vectors the index holds (SemanticStore.storedId), or null: none are read. */
export type VectorsOf = string | null;

/** One belief row as read for the index, before the index copies it into its columns (belief-table.ts). */
export interface IndexedBelief {
  belief: StoredBelief;
  /** lower(subject) as PostgreSQL computes it (the SQL arms compare that). */
  subjectKey: string;
  /** lex_tsv: lexemes with their positions' weight labels. */
  terms: TsEntry[];
  /** lex_lengths: occurrences per label A, B, C, D. */
  lengths: readonly [number, number, number, number];
  /** Earliest "not true" rejection, in epoch microseconds (the historical filter compares at that precision). */
  notTrueSinceUs: number | null;
  /** Latest rejection of any kind (a correction's "since" falls back to it). */
  lastRejectedAt: Date | null;
  /** Its current vector as stored; null when it has none (or a stale one), or when vectors are not read. */
  vector: Float32Array | null;
  /** Its ordinal in the principal's index (the same for every row of one belief id): where its columns and postings are. */
  ord: number;
}

/** The principal's small tables and head, read in one statement. */
export interface SideTables {
  position: number;
  persona: Set<string>;
  /** alias_key → lower(subject). */
  aliases: Map<string, string>;
}

const INDEXED_COLUMNS = `${BELIEF_COLUMNS}, lower(b.subject) AS subject_key, b.lex_tsv::text AS lex_tsv,
  b.lex_lengths[1] AS len_a, b.lex_lengths[2] AS len_b, b.lex_lengths[3] AS len_c, b.lex_lengths[4] AS len_d,
  (SELECT (extract(epoch FROM min(r.created_at)) * 1000000)::bigint FROM rejections r
    WHERE r.tenant_id = b.tenant_id AND r.principal_id = b.principal_id AND r.belief_id = b.belief_id
      AND r.kind = 'not_true') AS not_true_us,
  (SELECT max(r.created_at) FROM rejections r
    WHERE r.tenant_id = b.tenant_id AND r.principal_id = b.principal_id AND r.belief_id = b.belief_id) AS rejected_at`;

/**
 * Every belief row of the principal, a page at a time in belief_id order
 * (indexedFromRow makes each an IndexedBelief). Pages let the statements of
 * calls answered from SQL meanwhile run between them: the embedded store has
 * one connection, and one statement reading 50k rows held every call behind
 * it for a second or more. A row written while the pages are read has a
 * position above the head read before them, so the first delta re-reads it.
 */
export async function* loadBeliefRows(db: SqlClient, p: Principal, vectorsOf: VectorsOf, pageRows = LOAD_PAGE_ROWS): AsyncGenerator<Row[]> {
  let after: string | null = null;
  for (;;) {
    // Two statements, not one with "$3 IS NULL OR …": each page must be a range of the primary key.
    const page: Row[] =
      after === null
        ? await db.query(
            `SELECT ${indexedFrom(vectorsOf, "$4")} WHERE b.tenant_id = $1 AND b.principal_id = $2
             ORDER BY b.belief_id LIMIT $3`,
            withVectorsOf([p.tenantId, p.principalId, pageRows], vectorsOf),
          )
        : await db.query(
            `SELECT ${indexedFrom(vectorsOf, "$5")} WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id > $3::uuid
             ORDER BY b.belief_id LIMIT $4`,
            withVectorsOf([p.tenantId, p.principalId, after, pageRows], vectorsOf),
          );
    if (page.length > 0) yield page;
    if (page.length < pageRows) return;
    after = String(page[page.length - 1]!.belief_id);
  }
}

/** The columns and FROM of an index read; with `vectorsOf`, each row's current vector, its embedder id in `param`. */
function indexedFrom(vectorsOf: VectorsOf, param: string): string {
  if (vectorsOf === null) return `${INDEXED_COLUMNS} FROM beliefs b`;
  const { column, join } = currentVectorJoin(param);
  return `${INDEXED_COLUMNS}, ${column} FROM beliefs b ${join}`;
}

function withVectorsOf(params: unknown[], vectorsOf: VectorsOf): unknown[] {
  return vectorsOf === null ? params : [...params, vectorsOf];
}

/** Rows per statement of a load (a few MiB of rows, tens of ms on the embedded store). */
const LOAD_PAGE_ROWS = 2_000;

/**
 * The delta above `position`, in one statement: rows written since (their
 * store_position is above it), rows named by id (feedback changes utility
 * without moving the head), and rows whose source context changed because
 * episodes of their sessions were appended since (the lexical document
 * changes, the row's position does not).
 */
export async function loadDelta(
  db: SqlClient,
  p: Principal,
  position: number,
  beliefIds: readonly string[],
  vectorsOf: VectorsOf,
): Promise<IndexedBelief[]> {
  const rows = await db.query(
    `SELECT ${indexedFrom(vectorsOf, "$5")}
     WHERE b.tenant_id = $1 AND b.principal_id = $2
       AND (b.store_position > $3::bigint OR b.belief_id = ANY($4::uuid[])
         OR b.source_episode_ids && ARRAY(SELECT x.episode_id FROM episodes x
           WHERE x.tenant_id = $1 AND x.principal_id = $2 AND x.session_id IN (
             SELECT y.session_id FROM episodes y
             WHERE y.tenant_id = $1 AND y.principal_id = $2 AND y.store_position > $3::bigint)))`,
    withVectorsOf([p.tenantId, p.principalId, position, beliefIds], vectorsOf),
  );
  return rows.map(indexedFromRow);
}

export async function loadSideTables(db: SqlClient, p: Principal): Promise<SideTables> {
  const rows = await db.query<{ kind: string; a: string; b: string | null }>(
    `SELECT 'head' AS kind, h.position::text AS a, NULL::text AS b FROM principal_heads h
       WHERE h.tenant_id = $1 AND h.principal_id = $2
     UNION ALL
     SELECT 'persona', pe.belief_id::text, NULL FROM persona_entries pe WHERE pe.tenant_id = $1 AND pe.principal_id = $2
     UNION ALL
     SELECT 'alias', a.alias_key, lower(a.subject) FROM subject_aliases a WHERE a.tenant_id = $1 AND a.principal_id = $2`,
    [p.tenantId, p.principalId],
  );
  const side: SideTables = { position: 0, persona: new Set(), aliases: new Map() };
  for (const r of rows) {
    if (r.kind === "head") side.position = Number(r.a);
    else if (r.kind === "persona") side.persona.add(r.a);
    else side.aliases.set(r.a, r.b!);
  }
  return side;
}

/** Lexemes PostgreSQL's english configuration gives for each term (for the terms query-lexemes.ts leaves to it). */
export async function sqlLexemes(db: SqlClient, terms: readonly string[], options?: QueryOptions): Promise<Map<string, string[]>> {
  const rows = await db.query<{ term: string; lexemes: string[] | null }>(
    `SELECT w AS term, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', w)) AS u ORDER BY u.lexeme) AS lexemes
     FROM unnest($1::text[]) AS w`,
    [terms],
    options,
  );
  return new Map(rows.map((r) => [r.term, r.lexemes ?? []]));
}

export function indexedFromRow(r: Row): IndexedBelief {
  return {
    belief: beliefFromRow(r),
    subjectKey: String(r.subject_key),
    terms: parseTsvector(String(r.lex_tsv ?? "")),
    lengths: [Number(r.len_a ?? 0), Number(r.len_b ?? 0), Number(r.len_c ?? 0), Number(r.len_d ?? 0)],
    notTrueSinceUs: r.not_true_us === null || r.not_true_us === undefined ? null : Number(r.not_true_us),
    lastRejectedAt: (r.rejected_at as Date | null) ?? null,
    vector: r.embedding instanceof Uint8Array ? vectorFromBinary(r.embedding) : null,
    ord: -1,
  };
}

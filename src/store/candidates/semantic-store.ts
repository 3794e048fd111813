import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../../config/config.js";
import type { Principal, SensitivityLevel } from "../../domain/model.js";
import { documentEmbedderId, vectorLiteral, type DocumentWeights } from "../../ports/embedder.js";
import { sourceContextTexts, type SourceContextText } from "../beliefs/source-context.js";
import type { EligibilityFilter } from "../../domain/hard-filter.js";
import { BELIEF_COLUMNS, beliefFromRow } from "../beliefs/belief-rows.js";
import { eligibilitySql } from "./eligibility-sql.js";
import type { ArmCandidate } from "../../ports/candidate-source.js";
import { MIGRATIONS_DIR } from "../migrate.js";
import { ROWS_CHANNEL } from "../beliefs/belief-writes.js";
import { int8Rounded } from "../../domain/int8-vector.js";
import { fleetScan } from "../fleet-scan.js";
import type { QueryOptions, SqlClient } from "../sql-client.js";
import { SqlParams } from "../sql-params.js";

/**
 * The semantic arm's SQL: its optional schema, the background embedder's
 * reads and writes, and the arm's one query. Kept apart from MemoryStore so
 * nothing here is touched unless RECALL_SEMANTIC=on.
 */

/** Belief ids per rows-channel notification of saved vectors (each about 40 bytes of the 8000 a payload may hold). */
const NOTIFY_IDS = 150;

/** Shared with migrate.ts's lock key space; only names this setup among other advisory locks. */
const SETUP_LOCK_KEY = 7_311_046_212;

export const SEMANTIC_SETUP_SQL = join(MIGRATIONS_DIR, "optional", "semantic.sql");

/** A belief whose document (statement and source context) has no current embedding. */
export interface MissingEmbedding {
  principal: Principal;
  beliefId: string;
  statement: string;
  /** Its source context as the lexical arm indexes it (store/beliefs/source-context.ts). */
  context: SourceContextText;
  /** What the embedding is current for: md5 of the statement and the source context's index. */
  documentKey: string;
}

/**
 * The key of a belief's embedded document. context_tsv changes exactly when
 * the belief's source context does (an episode appended to its session, a
 * correction), so a vector is current while the key is unchanged.
 */
const DOCUMENT_KEY_SQL = "md5(b.statement || chr(31) || b.context_tsv::text)";

/**
 * For a read of beliefs `b` (the principal index's load and delta): the join
 * that adds each belief's current vector of the stored embedder id in
 * parameter `embedderParam` as column `embedding`, pgvector's binary form
 * (vectorFromBinary reads it), NULL when it has none or only a stale one.
 */
export function currentVectorJoin(embedderParam: string): { column: string; join: string } {
  return {
    column: "vector_send(v.embedding) AS embedding",
    join: `LEFT JOIN belief_embeddings v
      ON v.tenant_id = b.tenant_id AND v.principal_id = b.principal_id AND v.belief_id = b.belief_id
        AND v.embedder = ${embedderParam} AND v.statement_md5 = ${DOCUMENT_KEY_SQL}`,
  };
}

/** pgvector's binary form (vector_send): dimension and a reserved word as int16, then float4s, big-endian. */
export function vectorFromBinary(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dim = view.getInt16(0);
  const out = new Float32Array(dim);
  for (let i = 0; i < dim; i++) out[i] = view.getFloat32(4 + 4 * i);
  return out;
}

/**
 * Creates the vector extension and the embeddings table if needed. On a
 * server without pgvector this refuses with a message naming the fix,
 * before anything is created.
 */
export async function enableSemantic(db: SqlClient): Promise<void> {
  const available = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (available.length === 0) {
    throw new ConfigError(
      db.kind === "postgres"
        ? "RECALL_SEMANTIC=on needs the pgvector extension, which this PostgreSQL server does not have: " +
            "install pgvector on the server (e.g. the postgresql-15-pgvector package) or set RECALL_SEMANTIC=off"
        : "RECALL_SEMANTIC=on needs the vector extension, which this PGlite database was opened without",
    );
  }
  const sql = await readFile(SEMANTIC_SETUP_SQL, "utf8");
  await db.transaction(async (tx) => {
    // Two sidecars starting together must not race on CREATE ... IF NOT EXISTS.
    await tx.query("SELECT pg_advisory_xact_lock($1::bigint)", [SETUP_LOCK_KEY]);
    await tx.exec(sql);
  });
}

export class SemanticStore {
  /**
   * `document`: the weights of the embedded document's parts (the lexical
   * fields' weights), named in the stored embedder id, so that vectors of
   * another composition count as missing and are embedded again.
   */
  constructor(
    readonly db: SqlClient,
    readonly document: DocumentWeights,
  ) {}

  /** The id stored with a vector of `embedder`: the embedder's and the document's composition. */
  storedId(embedder: string): string {
    return documentEmbedderId(embedder, this.document);
  }

  /**
   * Beliefs without a current embedding from `embedder` (none, another
   * embedder's, or one of an older statement), at most `limit`, up to the
   * sensitivity ceiling of what may be sent to it, less the `exclude`d
   * belief ids (statements the endpoint refused): of one principal (written
   * after `afterPosition`), or of every principal (the background embedder's
   * sweep). Maintenance, not a
   * recall: it reads statements to embed and never returns them to anyone.
   */
  async missingEmbeddings(
    embedderId: string,
    ceiling: SensitivityLevel,
    limit: number,
    options: { exclude?: readonly string[]; principal?: Principal; afterPosition?: number } = {},
  ): Promise<MissingEmbedding[]> {
    const embedder = this.storedId(embedderId);
    const p = new SqlParams();
    const clauses = [
      "e.belief_id IS NULL",
      `b.sensitivity <= ${p.add(ceiling)}`,
      `NOT (b.belief_id = ANY(${p.add(options.exclude ?? [])}::uuid[]))`,
    ];
    if (options.principal) {
      clauses.unshift(`b.tenant_id = ${p.add(options.principal.tenantId)}`, `b.principal_id = ${p.add(options.principal.principalId)}`);
      // Only what was written after a position already covered: the principal's index range, not all its beliefs.
      // An episode appended since moves no belief but changes the context of those citing its session.
      if (options.afterPosition) {
        const after = p.add(options.afterPosition);
        clauses.push(
          `(b.store_position > ${after}::bigint OR b.source_episode_ids && ARRAY(
             SELECT x.episode_id FROM episodes x WHERE x.tenant_id = b.tenant_id AND x.principal_id = b.principal_id
               AND x.session_id IN (SELECT y.session_id FROM episodes y
                 WHERE y.tenant_id = b.tenant_id AND y.principal_id = b.principal_id AND y.store_position > ${after}::bigint)))`,
        );
      }
    }
    const text = `SELECT b.tenant_id, b.principal_id, b.belief_id::text AS belief_id, b.statement, ${DOCUMENT_KEY_SQL} AS document_key
       FROM beliefs b
       -- LATERAL ... LIMIT 1 is never flattened into an anti join: one primary-key probe per belief, in
       -- order, stopping at the limit. (On PGlite's stale statistics an anti join merged on tenant and
       -- principal alone, quadratic in the principal's beliefs.)
       LEFT JOIN LATERAL (
         SELECT e.belief_id FROM belief_embeddings e
         WHERE e.tenant_id = b.tenant_id AND e.principal_id = b.principal_id AND e.belief_id = b.belief_id
           AND e.embedder = ${p.add(embedder)} AND e.statement_md5 = ${DOCUMENT_KEY_SQL}
         LIMIT 1
       ) e ON true
       WHERE ${clauses.join(" AND ")}
       ORDER BY b.tenant_id, b.principal_id, b.store_position, b.belief_id
       LIMIT ${p.add(limit)}`;
    // Without a principal, the background embedder's sweep over every tenant: a fleet scan.
    const rows = await this.db.query<{ tenant_id: string; principal_id: string; belief_id: string; statement: string; document_key: string }>(
      options.principal ? text : fleetScan(text),
      p.values,
    );
    // The context texts, one query per principal of the batch.
    const contexts = new Map<string, SourceContextText>();
    const byPrincipal = new Map<string, typeof rows>();
    for (const r of rows) {
      const key = `${r.tenant_id}\u0000${r.principal_id}`;
      byPrincipal.set(key, [...(byPrincipal.get(key) ?? []), r]);
    }
    for (const group of byPrincipal.values()) {
      const principal = { tenantId: group[0]!.tenant_id, principalId: group[0]!.principal_id };
      for (const [id, c] of await sourceContextTexts(this.db, principal, group.map((r) => r.belief_id))) contexts.set(id, c);
    }
    return rows.map((r) => ({
      principal: { tenantId: r.tenant_id, principalId: r.principal_id },
      beliefId: r.belief_id,
      statement: r.statement,
      context: contexts.get(r.belief_id) ?? { source: "", neighbours: "" },
      documentKey: r.document_key,
    }));
  }

  /** The principal's store head: every belief at or below it is committed. */
  async headPosition(p: Principal): Promise<number> {
    const rows = await this.db.query("SELECT position FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2", [
      p.tenantId,
      p.principalId,
    ]);
    return Number(rows[0]?.position ?? 0);
  }

  /**
   * Stores embeddings under the document key they were computed for. A belief
   * rewritten meanwhile (or whose context changed) keeps its new key
   * mismatched, so it is embedded again on the next pass; a belief deleted
   * meanwhile is skipped. Each vector is stored as the int8 values the
   * principal index holds (int8 × scale, domain/int8-vector.ts), so the SQL
   * scan and the index rank the same vectors; and the saved rows are
   * announced on the rows channel, so every sidecar's loaded index reads them.
   */
  async saveEmbeddings(embedderId: string, rows: readonly (MissingEmbedding & { vector: readonly number[] })[]): Promise<void> {
    if (rows.length === 0) return;
    const embedder = this.storedId(embedderId);
    // One statement per tenant of the batch (routed to its shard group); the join to beliefs skips a belief deleted meanwhile.
    for (const tenantId of new Set(rows.map((r) => r.principal.tenantId))) {
      await this.saveTenantEmbeddings(embedder, tenantId, rows.filter((r) => r.principal.tenantId === tenantId));
    }
  }

  private async saveTenantEmbeddings(
    embedder: string,
    tenantId: string,
    rows: readonly (MissingEmbedding & { vector: readonly number[] })[],
  ): Promise<void> {
    await this.db.query(
      `WITH saved AS (
         INSERT INTO belief_embeddings (tenant_id, principal_id, belief_id, embedder, statement_md5, embedding)
         SELECT b.tenant_id, b.principal_id, b.belief_id, $1, r.document_key, r.embedding::vector
         FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[])
           AS r(tenant_id, principal_id, belief_id, document_key, embedding)
         JOIN beliefs b ON b.tenant_id = r.tenant_id AND b.principal_id = r.principal_id AND b.belief_id = r.belief_id
         WHERE b.tenant_id = $7
         ON CONFLICT (tenant_id, principal_id, belief_id) DO UPDATE SET
           embedder = EXCLUDED.embedder, statement_md5 = EXCLUDED.statement_md5,
           embedding = EXCLUDED.embedding, embedded_at = now()
         RETURNING tenant_id, principal_id, belief_id
       ),
       -- Ids in chunks of ${NOTIFY_IDS} per notification (a payload holds at most 8000 bytes; null ids would drop the index).
       chunked AS (
         SELECT s.tenant_id, s.principal_id, s.belief_id,
           (row_number() OVER (PARTITION BY s.tenant_id, s.principal_id ORDER BY s.belief_id) - 1) / ${NOTIFY_IDS} AS chunk
         FROM saved s
       )
       SELECT pg_notify('${ROWS_CHANNEL}', json_build_array(c.tenant_id, c.principal_id, array_agg(c.belief_id::text ORDER BY c.belief_id))::text)
       FROM chunked c GROUP BY c.tenant_id, c.principal_id, c.chunk`,
      [
        embedder,
        rows.map((r) => r.principal.tenantId),
        rows.map((r) => r.principal.principalId),
        rows.map((r) => r.beliefId),
        rows.map((r) => r.documentKey),
        rows.map((r) => vectorLiteral(int8Rounded(r.vector))),
        tenantId,
      ],
    );
  }

  /**
   * Semantic arm: eligible beliefs with a current embedding of their document, nearest to
   * `vector` by cosine distance, ties by belief id. The hard filter comes
   * first in the WHERE clause and the scan is exact (no ANN index), so the
   * candidate cap applies only to this principal's eligible beliefs.
   * Beliefs less similar than `minSimilarity` are not candidates.
   * arm_score is the cosine similarity.
   */
  async semanticCandidates(
    f: EligibilityFilter,
    embedderId: string,
    vector: readonly number[],
    cap: number,
    minSimilarity: number,
    options?: QueryOptions,
  ): Promise<ArmCandidate[]> {
    const p = new SqlParams();
    const where = eligibilitySql(f, p);
    const query = p.add(vectorLiteral(vector));
    const text = `SELECT ${BELIEF_COLUMNS}, (e.embedding <=> ${query}::vector)::float8 AS distance
      FROM beliefs b
      JOIN belief_embeddings e
        ON e.tenant_id = b.tenant_id AND e.principal_id = b.principal_id AND e.belief_id = b.belief_id
      WHERE ${where}
        AND e.embedder = ${p.add(this.storedId(embedderId))} AND e.statement_md5 = ${DOCUMENT_KEY_SQL}
        AND (e.embedding <=> ${query}::vector) <= ${p.add(1 - minSimilarity)}::float8
      ORDER BY distance, b.belief_id
      LIMIT ${p.add(cap)}`;
    const rows = await this.db.query(text, p.values, options);
    return rows.map((r) => ({ belief: beliefFromRow(r), armScore: 1 - Number(r.distance) }));
  }
}

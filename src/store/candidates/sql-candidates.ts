import type { Correction, Principal, StoredBelief } from "../../domain/model.js";
import {
  NOT_OWNERSHIP_STATEMENT,
  OWNERSHIP_STATEMENT,
  type ArmCandidate,
  type CandidateSource,
  type LexicalQuery,
  type NamedSubjects,
  type StructuredAnchors,
} from "../../ports/candidate-source.js";
import type { EligibilityFilter } from "../../domain/hard-filter.js";
import { BELIEF_COLUMNS, beliefFromRow } from "../beliefs/belief-rows.js";
import { eligibilitySql, successorInForceSql } from "./eligibility-sql.js";
import type { QueryOptions, Row, SqlClient } from "../sql-client.js";
import { SqlParams } from "../sql-params.js";

/**
 * The read arms' SQL: the candidate source for a principal the in-process
 * index does not hold (yet), and the reference the index is tested against.
 * Every statement's WHERE starts with the hard filter (store/candidates/eligibility-sql.ts).
 */
export class SqlCandidateSource implements CandidateSource {
  constructor(private readonly db: SqlClient) {}

  async expandSubjects(p: Principal, subjects: readonly string[]): Promise<string[]> {
    const groups = await this.expandSubjectsEach(p, subjects);
    return [...new Set([...groups.values()].flat())].sort();
  }

  /**
   * expandSubjects per requested subject, in one query: each lower-cased
   * subject maps to its own names (itself, its canonical subject, their
   * aliases). The union of the groups is exactly expandSubjects' answer; the
   * groups tell which named subject a returned belief is about.
   */
  async expandSubjectsEach(p: Principal, subjects: readonly string[], options?: QueryOptions): Promise<Map<string, string[]>> {
    const names = [...new Set(subjects.map((s) => s.toLowerCase()))];
    const groups = new Map<string, string[]>(names.map((n) => [n, []]));
    if (names.length === 0) return groups;
    const rows = await this.db.query<{ requested: string; name: string }>(
      `WITH requested AS (SELECT unnest($3::text[]) AS requested),
       canonical AS (
         SELECT r.requested, lower(a.subject) AS subject FROM requested r
           JOIN subject_aliases a ON a.tenant_id = $1 AND a.principal_id = $2 AND a.alias_key = r.requested
         UNION SELECT r.requested, r.requested FROM requested r
       )
       SELECT c.requested, c.subject AS name FROM canonical c
       UNION
       SELECT c.requested, a.alias_key FROM subject_aliases a JOIN canonical c ON lower(a.subject) = c.subject
       WHERE a.tenant_id = $1 AND a.principal_id = $2`,
      [p.tenantId, p.principalId, names],
      options,
    );
    for (const r of rows) groups.get(r.requested)?.push(r.name);
    for (const list of groups.values()) list.sort();
    return groups;
  }

  /**
   * Structured arm: beliefs whose subject is named (score 1.0), direct
   * ownership/use statements when that lookup is on (its weight, 0.5), or
   * whose type is an anchor (typeWeight, 0.25); the best that applies. With
   * no anchors at all (a snapshot), every eligible belief is a candidate,
   * most durable first. Ordering by that score before the LIMIT is what puts
   * matching candidates ahead of the candidate cap.
   */
  async structuredCandidates(
    f: EligibilityFilter,
    anchors: StructuredAnchors,
    cap: number,
    options?: QueryOptions,
  ): Promise<ArmCandidate[]> {
    const p = new SqlParams();
    const where = eligibilitySql(f, p);
    const subjects = p.add(anchors.subjects);
    const types = p.add(anchors.types);
    const typeWeight = p.add(anchors.typeWeight);
    const owned = anchors.owned ?? null;
    const ownedMatch = owned
      ? `(b.belief_type = ANY(${p.add(owned.types)}::text[]) AND b.statement ~* ${p.add(OWNERSHIP_STATEMENT)}
          AND b.statement !~* ${p.add(NOT_OWNERSHIP_STATEMENT)})`
      : "false";
    const anchored = anchors.subjects.length > 0 || anchors.types.length > 0 || owned !== null;
    const text = `SELECT ${BELIEF_COLUMNS},
        GREATEST(
          CASE WHEN lower(b.subject) = ANY(${subjects}::text[]) THEN 1.0 ELSE 0.0 END,
          CASE WHEN ${ownedMatch} THEN ${owned ? p.add(owned.weight) : "0"}::float8 ELSE 0.0 END,
          CASE WHEN b.belief_type = ANY(${types}::text[]) THEN ${typeWeight}::float8 ELSE 0.0 END
        )::float8 AS arm_score
      FROM beliefs b
      WHERE ${where}
      ${anchored ? `AND (lower(b.subject) = ANY(${subjects}::text[]) OR b.belief_type = ANY(${types}::text[]) OR ${ownedMatch})` : ""}
      ORDER BY arm_score DESC, CASE b.authority WHEN 'user' THEN 0 WHEN 'affirmed' THEN 1 ELSE 2 END,
        b.confidence DESC, b.evidence_count DESC, b.belief_id
      LIMIT ${p.add(cap)}`;
    return candidates(await this.db.query(text, p.values, options));
  }

  /**
   * Lexical arm: BM25F over each eligible belief's lexical index (subject,
   * statement, source episodes, their neighbours; sql/0005_lexicon.sql),
   * with document frequencies counted over the principal's eligible beliefs
   * that match, and document count and average length from principal_lexicon.
   * The hard filter is the WHERE clause of the only scan; everything after
   * it works on that set. Beliefs about a subject the question names, and
   * beliefs from a month or year it names, are boosted. Ties break by id.
   */
  async lexicalCandidates(f: EligibilityFilter, q: LexicalQuery, cap: number, options?: QueryOptions): Promise<ArmCandidate[]> {
    if (q.terms.length === 0) return [];
    const s = q.scoring;
    const p = new SqlParams();
    const where = eligibilitySql(f, p);
    const tenant = p.add(f.principal.tenantId);
    const principal = p.add(f.principal.principalId);
    const [wa, wb, wc, wd] = [s.fieldWeights.subject, s.fieldWeights.statement, s.fieldWeights.source, s.fieldWeights.neighbours].map(
      (w) => `${p.add(w)}::float8`,
    );
    const k1 = `${p.add(s.k1)}::float8`;
    const bl = `${p.add(s.b)}::float8`;
    const dateNamed = q.dates.years.length > 0 || q.dates.months.length > 0;
    const years = dateNamed ? p.add(q.dates.years) : "";
    const months = dateNamed ? p.add(q.dates.months) : "";
    const dateMatch = dateNamed
      ? `(cardinality(${years}::int[]) = 0 OR extract(year FROM b.valid_from AT TIME ZONE 'UTC')::int = ANY(${years}::int[]))
         AND (cardinality(${months}::int[]) = 0 OR extract(month FROM b.valid_from AT TIME ZONE 'UTC')::int = ANY(${months}::int[]))`
      : "false";
    const text = `WITH stats AS (
        SELECT GREATEST(COALESCE(l.docs, 0), 1)::float8 AS n,
          GREATEST((COALESCE(l.len_a, 0) * ${wa} + COALESCE(l.len_b, 0) * ${wb} + COALESCE(l.len_c, 0) * ${wc}
            + COALESCE(l.len_d, 0) * ${wd}) / GREATEST(COALESCE(l.docs, 0), 1), 1e-9)::float8 AS avgdl
        FROM (SELECT 1) AS one
        LEFT JOIN principal_lexicon l ON l.tenant_id = ${tenant} AND l.principal_id = ${principal}
      ),
      qlex AS (
        SELECT u.lexeme, quote_literal(u.lexeme)::tsquery AS tq
        FROM unnest(to_tsvector('english', ${p.add(q.terms.join(" "))}::text)) AS u
      ),
      matched AS MATERIALIZED (
        SELECT b.belief_id, b.lex_tsv, b.lex_lengths FROM beliefs b
        WHERE ${where} AND b.lex_tsv @@ to_tsquery('english', ${p.add(q.terms.join(" | "))}::text)
      ),
      hits AS (SELECT m.belief_id, ql.lexeme FROM matched m JOIN qlex ql ON m.lex_tsv @@ ql.tq),
      idf AS (
        SELECT h.lexeme, ${idfSql("st.n", "count(*)")} AS idf
        FROM hits h, stats st GROUP BY h.lexeme, st.n
      ),
      pre AS (
        SELECT h.belief_id FROM hits h JOIN idf USING (lexeme)
        GROUP BY h.belief_id ORDER BY round(sum(idf.idf ORDER BY h.lexeme COLLATE "C")::numeric, 12) DESC, h.belief_id LIMIT ${p.add(s.prescoreCap)}
      ),
      tf AS (
        SELECT m.belief_id, u.lexeme,
          (SELECT sum(CASE w WHEN 'A' THEN ${wa} WHEN 'B' THEN ${wb} WHEN 'C' THEN ${wc} ELSE ${wd} END)
           FROM unnest(u.weights) AS w) AS tf,
          m.lex_lengths[1] * ${wa} + m.lex_lengths[2] * ${wb} + m.lex_lengths[3] * ${wc} + m.lex_lengths[4] * ${wd} AS dl
        FROM pre JOIN matched m USING (belief_id), unnest(m.lex_tsv) AS u
        WHERE u.lexeme IN (SELECT lexeme FROM qlex)
      ),
      scored AS (
        SELECT tf.belief_id,
          sum(idf.idf * tf.tf * (${k1} + 1) / (tf.tf + ${k1} * (1 - ${bl} + ${bl} * tf.dl / st.avgdl)) ORDER BY tf.lexeme COLLATE "C") AS bm25
        FROM tf JOIN idf USING (lexeme), stats st
        GROUP BY tf.belief_id
      )
      -- Both sums above add their terms in lexeme byte order (tsvector order, as the principal
      -- index adds them): left to the plan, the order followed the join, and a plan change after
      -- ANALYZE moved a score's 12th decimal. Rounded, as rank.ts rounds its score, so that a
      -- last-bit difference cannot reorder beliefs that score the same.
      SELECT ${BELIEF_COLUMNS},
        round((sc.bm25
          * CASE WHEN lower(b.subject) = ANY(${p.add(q.names)}::text[]) THEN ${p.add(s.namedSubjectBoost)}::float8 ELSE 1 END
          * CASE WHEN ${dateMatch} THEN ${p.add(s.dateBoost)}::float8 ELSE 1 END)::numeric, 12)::float8 AS arm_score
      FROM scored sc
      JOIN beliefs b ON b.tenant_id = ${tenant} AND b.principal_id = ${principal} AND b.belief_id = sc.belief_id
      -- The same rows by primary key: without it the planner, blind to how few rows
      -- scored holds, may scan the principal's beliefs once per row.
      WHERE b.belief_id = ANY(ARRAY(SELECT belief_id FROM scored))
      ORDER BY arm_score DESC, b.belief_id
      LIMIT ${p.add(cap)}`;
    return candidates(await this.db.query(text, p.values, options));
  }

  /**
   * Subjects the question names, for the lexical arm's boost: exact phrases
   * of the question (lower-cased), and near misses of its longer words by
   * trigram similarity (typos in names). Looked up among eligible beliefs
   * only, so a name is never learned from a belief the query may not see.
   */
  async resolveNamedSubjects(
    f: EligibilityFilter,
    phrases: readonly string[],
    fuzzyWords: readonly string[],
    minSimilarity: number,
    options?: QueryOptions,
  ): Promise<{ exact: string[]; fuzzy: string[] }> {
    if (phrases.length === 0 && fuzzyWords.length === 0) return { exact: [], fuzzy: [] };
    const p = new SqlParams();
    const where = eligibilitySql(f, p);
    const phraseList = p.add(phrases);
    const tenant = p.add(f.principal.tenantId);
    const principal = p.add(f.principal.principalId);
    // A near miss shares the first three letters, then must reach the policy's similarity.
    // The candidate names come first, each looked up once, and eligibility is asked of a name
    // only then (one eligible row is enough). Scanning the rows instead had PostgreSQL walk a
    // large principal's subject index end to end for its ORDER BY … LIMIT (1.3-1.7 s at 100k
    // beliefs against 4 ms, docs/adr/0001). `walk` steps through the distinct subjects in each
    // prefix's range of the (tenant, principal, lower(subject)) btree, one probe a name
    // (a loose index scan), rather than through every row of a common name; LIKE is the test.
    // pg_trgm's % operator is not used: PGlite mishandles it.
    const prefixes = p.add(fuzzyWords.map((w) => w.slice(0, 3)));
    const subjectAfter = (bound: string, upper: string) =>
      `(SELECT lower(s.subject) FROM beliefs s WHERE s.tenant_id = ${tenant} AND s.principal_id = ${principal}
          AND lower(s.subject) ${bound} AND lower(s.subject) < ${upper} || chr(1114111) ORDER BY lower(s.subject) LIMIT 1)`;
    const rows = await this.db.query<{ name: string; exact: boolean }>(
      `WITH RECURSIVE walk(prefix, name) AS (
         SELECT w.prefix, ${subjectAfter(">= w.prefix", "w.prefix")} FROM (SELECT DISTINCT unnest(${prefixes}::text[])) AS w(prefix)
         UNION ALL
         SELECT walk.prefix, ${subjectAfter("> walk.name", "walk.prefix")} FROM walk WHERE walk.name IS NOT NULL
       ), named AS (
         SELECT phrase AS name FROM unnest(${phraseList}::text[]) AS phrase
         UNION
         SELECT walk.name FROM walk
         JOIN unnest(${p.add(fuzzyWords)}::text[], ${prefixes}::text[], ${p.add(fuzzyWords.map((w) => `${escapeLike(w.slice(0, 3))}%`))}::text[])
           AS w(word, prefix, pattern) ON w.prefix = walk.prefix
         WHERE walk.name LIKE w.pattern AND similarity(walk.name, w.word) >= ${p.add(minSimilarity)}::float8
       )
       SELECT n.name, n.name = ANY(${phraseList}::text[]) AS exact FROM named n
       WHERE EXISTS (SELECT 1 FROM beliefs b WHERE ${where} AND lower(b.subject) = n.name)
       ORDER BY n.name LIMIT 32`,
      p.values,
      options,
    );
    return { exact: rows.filter((r) => r.exact).map((r) => r.name), fuzzy: rows.filter((r) => !r.exact).map((r) => r.name) };
  }

  /** Beliefs by id for the principal, whatever their state (re-rendering, partners). */
  async beliefsById(p: Principal, ids: readonly string[]): Promise<StoredBelief[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query(
      `SELECT ${BELIEF_COLUMNS} FROM beliefs b
       WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = ANY($3::uuid[]) ORDER BY b.belief_id`,
      [p.tenantId, p.principalId, ids],
    );
    return rows.map(beliefFromRow);
  }

  /** Delta arm: eligible beliefs written after the session's watermark, newest first. */
  async deltaCandidates(f: EligibilityFilter, afterPosition: number, cap: number, options?: QueryOptions): Promise<ArmCandidate[]> {
    const p = new SqlParams();
    const where = eligibilitySql(f, p);
    const text = `SELECT ${BELIEF_COLUMNS}, 1.0::float8 AS arm_score
      FROM beliefs b
      WHERE ${where} AND b.store_position > ${p.add(afterPosition)}::bigint
      ORDER BY b.store_position DESC, b.belief_id
      LIMIT ${p.add(cap)}`;
    return candidates(await this.db.query(text, p.values, options));
  }

  /**
   * Of the beliefs a session's snapshot returned, those that stopped holding
   * after its watermark, each with its successor (if any) and since when: the old row
   * changed after the watermark (superseded, expired, closed, retracted), or
   * a successor written after the watermark is now in force over it
   * (successorInForceSql), the old row left as it was.
   */
  async snapshotCorrections(
    p: Principal,
    returned: readonly string[],
    afterPosition: number,
    at: Date,
    options?: QueryOptions,
  ): Promise<Correction[]> {
    if (returned.length === 0) return [];
    const rows = await this.db.query<{ belief_id: string; superseded_by: string | null; since: Date }>(
      `SELECT old.belief_id::text AS belief_id, COALESCE(in_force.belief_id, successor.belief_id)::text AS superseded_by,
         COALESCE(LEAST(old.valid_to, in_force.valid_from), successor.valid_from, old.retracted_at,
           (SELECT max(r.created_at) FROM rejections r WHERE r.tenant_id = old.tenant_id
              AND r.principal_id = old.principal_id AND r.belief_id = old.belief_id),
           old.recorded_at) AS since
       FROM beliefs old
       LEFT JOIN LATERAL (
         SELECT n.belief_id, n.valid_from FROM beliefs n
         WHERE n.tenant_id = old.tenant_id AND n.principal_id = old.principal_id
           AND n.supersedes @> ARRAY[old.belief_id] AND n.status IN ('active', 'provisional')
         ORDER BY n.valid_from DESC, n.belief_id LIMIT 1
       ) successor ON true
       LEFT JOIN LATERAL (
         SELECT n.belief_id, n.valid_from, n.store_position FROM beliefs n
         WHERE ${successorInForceSql("n", "old", "$5", "$5")}
         ORDER BY n.valid_from DESC, n.belief_id LIMIT 1
       ) in_force ON true
       WHERE old.tenant_id = $1 AND old.principal_id = $2 AND old.belief_id = ANY($3::uuid[])
         AND ((old.store_position > $4::bigint
             AND (old.status IN ('superseded', 'expired') OR old.valid_to <= $5::timestamptz OR old.retracted_at <= $5::timestamptz))
           OR in_force.store_position > $4::bigint)
       ORDER BY old.belief_id`,
      [p.tenantId, p.principalId, [...new Set(returned)], afterPosition, at.toISOString()],
      options,
    );
    return rows.map((r) => ({ beliefId: r.belief_id, supersededBy: r.superseded_by, noLongerHoldsAsOf: r.since }));
  }
}

function candidates(rows: Row[]): ArmCandidate[] {
  return rows.map((r) => ({ belief: beliefFromRow(r), armScore: Number(r.arm_score) }));
}

/** A LIKE pattern matching `text` literally. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * BM25's idf of `df` matches among `n` beliefs, ln(1 + (n − df + 0.5) / (df + 0.5)),
 * as SQL: the log of the exact ratio (2n + 2) / (2df + 1) in numeric at 40
 * decimals, read back as the nearest float8. Not the float8 ln: the C
 * library's log is not correctly rounded, and the principal index computes
 * this same correctly rounded value in process (principal-index/bm25-idf.ts).
 */
export function idfSql(n: string, df: string): string {
  return `ln(round((2 * ${n} + 2)::numeric, 40) / (2 * ${df} + 1))::float8`;
}

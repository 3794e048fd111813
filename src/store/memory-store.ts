import { applyRejection, applyRejections, type RecordedRejection } from "../domain/rejection-replay.js";
import { NotFoundError, InvalidArgumentError } from "../domain/errors.js";
import type {
  Belief,
  Correction,
  Episode,
  Principal,
  RecallTrace,
  Rejection,
  RejectionKind,
  SensitivityLevel,
  StoredBelief,
  SubjectAlias,
} from "../domain/model.js";
import type { EligibilityFilter } from "../recall/hard-filter.js";
import { BELIEF_COLUMNS, EPISODE_COLUMNS, beliefFromRow, beliefParams, episodeFromRow } from "./belief-rows.js";
import { eligibilitySql, successorInForceSql } from "./eligibility-sql.js";
import type { QueryOptions, Row, SqlClient } from "./sql-client.js";
import { LexiconDelta } from "./lexicon-stats.js";
import { refreshSourceContext } from "./source-context.js";
import { SqlParams } from "./sql-params.js";
import { FEEDBACK } from "../trace/feedback.js";
import { TraceStore } from "./trace-store.js";

/** NOTIFY channel carrying [tenant, principal, position, updated_at] whenever a principal's head moves. */
export const HEAD_CHANNEL = "recall_head";

/** Rows written between two statistics refreshes of the embedded store. */
const ANALYZE_EVERY = 2000;

/** A candidate from one arm: the belief and that arm's own score. */
export interface ArmCandidate {
  belief: StoredBelief;
  armScore: number;
}

export interface StoreHead {
  position: number;
  updatedAt: Date | null;
}

export interface SnapshotReportRow {
  sessionId: string;
  snapshotSize: number;
  cited: number;
  /** cited / snapshotSize: sustained values below about 0.25 mean the core carries passengers. */
  utilization: number;
  inTurnReturned: number;
  /** In-turn results that were snapshot-eligible but not in the snapshot: the core may be too small. */
  misses: number;
}

/** What the lexical arm looks up, and how it scores (the policy's lexical section). */
export interface LexicalQuery {
  /** Content terms, function words removed. */
  terms: readonly string[];
  /** Lower-cased subject names the question names: their beliefs are boosted. */
  names: readonly string[];
  /** Months (1-12) and years the question names: beliefs valid from then are boosted. */
  dates: { years: readonly number[]; months: readonly number[] };
  scoring: LexicalScoring;
}

export interface LexicalScoring {
  k1: number;
  b: number;
  /** BM25F field weights: tf and length count each occurrence by its field's weight. */
  fieldWeights: { subject: number; statement: number; source: number; neighbours: number };
  /** Matches kept for exact scoring, by summed IDF of the terms they contain. */
  prescoreCap: number;
  namedSubjectBoost: number;
  dateBoost: number;
}

/** What the structured arm looks up. */
export interface StructuredAnchors {
  /** Lower-cased, alias-expanded subject names (match 1.0). */
  subjects: readonly string[];
  /** Belief types to anchor (OR), at typeWeight. */
  types: readonly string[];
  typeWeight: number;
  /** The bounded ownership lookup: direct "User has/owns/drives/uses …" statements of these types. */
  owned?: { weight: number; types: readonly string[] } | null;
}

/**
 * A direct, affirmative ownership or use statement in canonical form:
 * "User has …", "The user drives …". PostgreSQL ARE, matched with ~*.
 */
export const OWNERSHIP_STATEMENT = String.raw`^\s*(the\s+)?user\s+(has|owns|drives|uses)\M`;
/** Negated and past-use forms that look like ownership and are not: "User has never owned …", "User has had …". */
export const NOT_OWNERSHIP_STATEMENT = String.raw`^\s*(the\s+)?user\s+has\s+(not|never|no|had|owned|used|driven|sold)\M`;

export interface EpisodeQuery {
  sessionId: string | null;
  startTime: Date | null;
  endTime: Date | null;
  includeArchival: boolean;
  sensitivityCeiling: SensitivityLevel;
  after: { occurredAt: Date; sequence: number; episodeId: string } | null;
  limit: number;
}

/**
 * All of recall's SQL, over either store. Every method takes the principal
 * first: there is no query path without the isolation predicates.
 */
export class MemoryStore {
  /** Traces, their retention and their feedback (store/trace-store.ts). */
  readonly traces: TraceStore;

  constructor(readonly db: SqlClient) {
    this.traces = new TraceStore(db);
  }

  async ping(): Promise<void> {
    await this.db.query("SELECT 1");
  }

  /**
   * PGlite has no autovacuum: after bulk writes the planner's statistics go
   * stale and the full-text plans degrade, so the service refreshes them
   * itself. PostgreSQL's autovacuum does this on its own.
   */
  async analyzeIfEmbedded(): Promise<void> {
    if (this.db.kind !== "pglite") return;
    // One statement per call: a multi-statement string runs as one transaction block, where VACUUM is refused.
    await this.db.exec("VACUUM ANALYZE beliefs");
    await this.db.exec("VACUUM ANALYZE episodes");
    this.rowsSinceAnalyze = 0;
  }

  private rowsSinceAnalyze = 0;

  /** Counts bulk writes and refreshes PGlite's statistics every ANALYZE_EVERY rows. */
  private async afterBulkWrite(rows: number): Promise<void> {
    this.rowsSinceAnalyze += rows;
    if (this.rowsSinceAnalyze >= ANALYZE_EVERY) await this.analyzeIfEmbedded();
  }

  async head(p: Principal): Promise<StoreHead> {
    const rows = await this.db.query(
      "SELECT position, updated_at FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2",
      [p.tenantId, p.principalId],
    );
    const r = rows[0];
    return r ? { position: Number(r.position), updatedAt: (r.updated_at as Date | null) ?? null } : { position: 0, updatedAt: null };
  }

  // ---- write side ---------------------------------------------------------

  /** Upserts by id; replays rejections; moves the head only when something changed. */
  async putBeliefs(p: Principal, beliefs: readonly Belief[]): Promise<{ written: number; position: number }> {
    const result = await this.db.transaction(async (tx) => {
      const write = await beginWrite(tx, p);
      const rejections = await rejectionsFor(
        tx,
        p,
        beliefs.map((b) => b.beliefId),
      );
      let written = 0;
      for (const belief of beliefs) {
        const replayed = applyRejections(belief, rejections.get(belief.beliefId) ?? []);
        written += await upsertBelief(tx, p, replayed, write.next, write.lexicon);
      }
      // The lexical index of a belief includes the episodes it was learned from.
      if (written > 0) await refreshSourceContext(tx, p, { beliefIds: beliefs.map((b) => b.beliefId) }, write.lexicon);
      return { written, position: await write.finish(written > 0) };
    });
    await this.afterBulkWrite(result.written);
    return result;
  }

  async appendEpisodes(p: Principal, episodes: readonly Episode[]): Promise<{ appended: number; position: number }> {
    const result = await this.db.transaction(async (tx) => {
      const write = await beginWrite(tx, p);
      let appended = 0;
      for (const e of episodes) {
        const rows = await tx.query(
          `INSERT INTO episodes (tenant_id, principal_id, episode_id, session_id, occurred_at, sequence, actor, kind,
             content, project, archival, sensitivity, store_position)
           VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7, $8, $9, $10, $11, $12, $13)
           ON CONFLICT (tenant_id, principal_id, episode_id) DO NOTHING RETURNING 1 AS ok`,
          [
            p.tenantId,
            p.principalId,
            e.episodeId,
            e.sessionId,
            e.occurredAt.toISOString(),
            e.sequence,
            e.actor,
            e.kind,
            e.content,
            e.project,
            e.archival,
            e.sensitivity,
            write.next,
          ],
        );
        appended += rows.length;
      }
      // Beliefs that arrived before these episodes (or cite their neighbours) index them now.
      if (appended > 0) {
        await refreshSourceContext(tx, p, { sessionIds: [...new Set(episodes.map((e) => e.sessionId))] }, write.lexicon);
      }
      return { appended, position: await write.finish(appended > 0) };
    });
    await this.afterBulkWrite(result.appended);
    return result;
  }

  async setPersonaEntry(p: Principal, beliefId: string): Promise<{ position: number }> {
    return this.db.transaction(async (tx) => {
      await requireBelief(tx, p, beliefId, "belief_id");
      const write = await beginWrite(tx, p);
      const rows = await tx.query(
        `INSERT INTO persona_entries (tenant_id, principal_id, belief_id) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING 1 AS ok`,
        [p.tenantId, p.principalId, beliefId],
      );
      return { position: await write.finish(rows.length > 0) };
    });
  }

  async removePersonaEntry(p: Principal, beliefId: string): Promise<{ removed: boolean; position: number }> {
    return this.db.transaction(async (tx) => {
      const write = await beginWrite(tx, p);
      const rows = await tx.query(
        `DELETE FROM persona_entries WHERE tenant_id = $1 AND principal_id = $2 AND belief_id = $3 RETURNING 1 AS ok`,
        [p.tenantId, p.principalId, beliefId],
      );
      return { removed: rows.length > 0, position: await write.finish(rows.length > 0) };
    });
  }

  async putSubjectAliases(p: Principal, aliases: readonly SubjectAlias[]): Promise<{ written: number }> {
    return this.db.transaction(async (tx) => {
      let written = 0;
      for (const a of aliases) {
        const rows = await tx.query(
          `INSERT INTO subject_aliases (tenant_id, principal_id, alias_key, alias, subject) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (tenant_id, principal_id, alias_key) DO UPDATE SET alias = EXCLUDED.alias, subject = EXCLUDED.subject
           WHERE (subject_aliases.alias, subject_aliases.subject) IS DISTINCT FROM (EXCLUDED.alias, EXCLUDED.subject)
           RETURNING 1 AS ok`,
          [p.tenantId, p.principalId, a.alias.toLowerCase(), a.alias, a.subject],
        );
        written += rows.length;
      }
      return { written };
    });
  }

  /**
   * Marks cited beliefs used: last_used_at and utility move; last_evidence_at
   * and confidence never do (being retrieved is not evidence of truth).
   * A cited belief the trace carried from another project joins the trace's
   * carried_in: a promotion candidate. Feedback does not move the store head:
   * it changes no belief's content. `turnId` null means the trace's own turn.
   */
  async recordCitations(
    p: Principal,
    traceId: string,
    beliefIds: readonly string[],
    turnId: string | null = null,
  ): Promise<{ recorded: number }> {
    return this.db.transaction(async (tx) => {
      // FOR SHARE: a concurrent session delete waits for this citation, or this finds the trace gone.
      const traces = await tx.query<{ returned: string[]; carried: string[]; turn_id: string }>(
        `SELECT returned::text[] AS returned, carried::text[] AS carried, turn_id FROM recall_traces
         WHERE tenant_id = $1 AND principal_id = $2 AND trace_id = $3 FOR SHARE`,
        [p.tenantId, p.principalId, traceId],
      );
      const trace = traces[0];
      if (!trace) throw new NotFoundError("trace not found");
      const returned = new Set(trace.returned);
      beliefIds.forEach((id, i) => {
        if (!returned.has(id)) throw new InvalidArgumentError(`belief_ids[${i}]`, "was not returned by this trace");
      });
      let recorded = 0;
      for (const id of new Set(beliefIds)) {
        const rows = await tx.query(
          `INSERT INTO citations (tenant_id, principal_id, trace_id, belief_id, turn_id) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT DO NOTHING RETURNING 1 AS ok`,
          [p.tenantId, p.principalId, traceId, id, turnId ?? trace.turn_id],
        );
        if (rows.length === 0) continue;
        recorded += 1;
        await tx.query(
          `UPDATE beliefs SET last_used_at = now(), utility = utility + (1 - utility) * $4::float8
           WHERE tenant_id = $1 AND principal_id = $2 AND belief_id = $3`,
          [p.tenantId, p.principalId, id, FEEDBACK.citationGain],
        );
      }
      const carried = new Set(trace.carried);
      const promoted = [...new Set(beliefIds)].filter((id) => carried.has(id));
      if (promoted.length > 0) {
        await tx.query(
          `UPDATE recall_traces SET carried_in = ARRAY(SELECT DISTINCT x FROM unnest(carried_in || $4::uuid[]) AS x ORDER BY x)
           WHERE tenant_id = $1 AND principal_id = $2 AND trace_id = $3`,
          [p.tenantId, p.principalId, traceId, promoted],
        );
      }
      return { recorded };
    });
  }

  /** Records the rejection event and applies it (and, for CHANGED, writes the correction). */
  async rejectBelief(p: Principal, rejection: Rejection): Promise<{ position: number }> {
    return this.db.transaction(async (tx) => {
      // The head lock comes first: a retry racing its original waits here, then sees it done.
      const write = await beginWrite(tx, p);
      const existing = await tx.query(
        `SELECT 1 AS ok FROM rejections WHERE tenant_id = $1 AND principal_id = $2 AND rejection_id = $3`,
        [p.tenantId, p.principalId, rejection.rejectionId],
      );
      if (existing.length > 0) return { position: await write.finish(false) };
      const target = await requireBelief(tx, p, rejection.beliefId, "belief_id");
      await tx.query(
        `INSERT INTO rejections (tenant_id, principal_id, rejection_id, belief_id, kind, correction_belief_id, scope, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          p.tenantId,
          p.principalId,
          rejection.rejectionId,
          rejection.beliefId,
          rejection.kind,
          rejection.correction?.beliefId ?? null,
          rejection.scope,
          rejection.reason,
        ],
      );
      const correction = rejection.correction;
      if (correction) {
        const supersedes = [...new Set([...correction.supersedes, target.beliefId])];
        await upsertBelief(tx, p, { ...correction, supersedes }, write.next, write.lexicon);
        await refreshSourceContext(tx, p, { beliefIds: [correction.beliefId] }, write.lexicon);
      }
      const corrected = applyRejection(target, rejection.kind, correction?.validFrom ?? null);
      await upsertBelief(tx, p, corrected, write.next, write.lexicon);
      return { position: await write.finish(true) };
    });
  }

  // ---- read side ----------------------------------------------------------

  /** Canonical subjects and all their aliases, lower-cased, for the given names, as one sorted list. */
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
  async expandSubjectsEach(p: Principal, subjects: readonly string[]): Promise<Map<string, string[]>> {
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
        SELECT h.lexeme, ln(1 + (st.n - count(*) + 0.5) / (count(*) + 0.5))::float8 AS idf
        FROM hits h, stats st GROUP BY h.lexeme, st.n
      ),
      pre AS (
        SELECT h.belief_id FROM hits h JOIN idf USING (lexeme)
        GROUP BY h.belief_id ORDER BY round(sum(idf.idf)::numeric, 12) DESC, h.belief_id LIMIT ${p.add(s.prescoreCap)}
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
          sum(idf.idf * tf.tf * (${k1} + 1) / (tf.tf + ${k1} * (1 - ${bl} + ${bl} * tf.dl / st.avgdl))) AS bm25
        FROM tf JOIN idf USING (lexeme), stats st
        GROUP BY tf.belief_id
      )
      -- Rounded, as rank.ts rounds its score: the two stores may sum the float terms in another
      -- order, and a last-bit difference must not reorder beliefs that score the same.
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
    // A near miss shares the first three letters, then must reach the policy's similarity. The
    // range on the prefix lets the (tenant, principal, lower(subject)) btree find the few rows
    // (the trigram index would first intersect the tenant's whole posting list); LIKE is the test.
    // pg_trgm's % operator is not used: PGlite mishandles it.
    const fuzzy = fuzzyWords
      .map((w) => {
        const prefix = p.add(w.slice(0, 3));
        return `(lower(b.subject) >= ${prefix}::text AND lower(b.subject) < ${prefix}::text || chr(1114111)
          AND lower(b.subject) LIKE ${p.add(`${escapeLike(w.slice(0, 3))}%`)}
          AND similarity(lower(b.subject), ${p.add(w)}::text) >= ${p.add(minSimilarity)}::float8)`;
      })
      .join(" OR ");
    const rows = await this.db.query<{ name: string; exact: boolean }>(
      `SELECT DISTINCT lower(b.subject) AS name, lower(b.subject) = ANY(${phraseList}::text[]) AS exact FROM beliefs b
       WHERE ${where} AND (lower(b.subject) = ANY(${phraseList}::text[])${fuzzy ? ` OR ${fuzzy}` : ""})
       ORDER BY name LIMIT 32`,
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

  async episodes(p: Principal, q: EpisodeQuery, options?: QueryOptions): Promise<Episode[]> {
    const params = new SqlParams();
    const clauses = [
      `e.tenant_id = ${params.add(p.tenantId)}`,
      `e.principal_id = ${params.add(p.principalId)}`,
      `e.sensitivity <= ${params.add(q.sensitivityCeiling)}`,
    ];
    if (q.sessionId !== null) clauses.push(`e.session_id = ${params.add(q.sessionId)}`);
    if (q.startTime) clauses.push(`e.occurred_at >= ${params.add(q.startTime.toISOString())}::timestamptz`);
    if (q.endTime) clauses.push(`e.occurred_at < ${params.add(q.endTime.toISOString())}::timestamptz`);
    if (!q.includeArchival) clauses.push("NOT e.archival");
    if (q.after) {
      clauses.push(`(e.occurred_at, e.sequence, e.episode_id) > (${params.add(q.after.occurredAt.toISOString())}::timestamptz,
        ${params.add(q.after.sequence)}::bigint, ${params.add(q.after.episodeId)}::uuid)`);
    }
    const rows = await this.db.query(
      `SELECT ${EPISODE_COLUMNS} FROM episodes e WHERE ${clauses.join(" AND ")}
       ORDER BY e.occurred_at, e.sequence, e.episode_id LIMIT ${params.add(q.limit)}`,
      params.values,
      options,
    );
    return rows.map(episodeFromRow);
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
   * Beliefs of the session's snapshot that stopped holding after its
   * watermark, each with its successor (if any) and since when: the old row
   * changed after the watermark (superseded, expired, closed, retracted), or
   * a successor written after the watermark is now in force over it
   * (successorInForceSql), the old row left as it was.
   */
  async snapshotCorrections(p: Principal, sessionId: string, afterPosition: number, at: Date): Promise<Correction[]> {
    const rows = await this.db.query<{ belief_id: string; superseded_by: string | null; since: Date }>(
      `WITH snapshot AS (
         SELECT t.returned FROM recall_traces t
         WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.moment = 'snapshot'
         ORDER BY t.created_at DESC, t.trace_id LIMIT 1
       )
       SELECT old.belief_id::text AS belief_id, COALESCE(in_force.belief_id, successor.belief_id)::text AS superseded_by,
         COALESCE(LEAST(old.valid_to, in_force.valid_from), successor.valid_from, old.retracted_at,
           (SELECT max(r.created_at) FROM rejections r WHERE r.tenant_id = old.tenant_id
              AND r.principal_id = old.principal_id AND r.belief_id = old.belief_id),
           old.recorded_at) AS since
       FROM snapshot, beliefs old
       LEFT JOIN LATERAL (
         SELECT n.belief_id, n.valid_from FROM beliefs n
         WHERE n.tenant_id = old.tenant_id AND n.principal_id = old.principal_id
           AND old.belief_id = ANY(n.supersedes) AND n.status IN ('active', 'provisional')
         ORDER BY n.valid_from DESC, n.belief_id LIMIT 1
       ) successor ON true
       LEFT JOIN LATERAL (
         SELECT n.belief_id, n.valid_from, n.store_position FROM beliefs n
         WHERE ${successorInForceSql("n", "old", "$5", "$5")}
         ORDER BY n.valid_from DESC, n.belief_id LIMIT 1
       ) in_force ON true
       WHERE old.tenant_id = $1 AND old.principal_id = $2 AND old.belief_id = ANY(snapshot.returned)
         AND ((old.store_position > $4::bigint
             AND (old.status IN ('superseded', 'expired') OR old.valid_to <= $5::timestamptz OR old.retracted_at <= $5::timestamptz))
           OR in_force.store_position > $4::bigint)
       ORDER BY old.belief_id`,
      [p.tenantId, p.principalId, sessionId, afterPosition, at.toISOString()],
    );
    return rows.map((r) => ({ beliefId: r.belief_id, supersededBy: r.superseded_by, noLongerHoldsAsOf: r.since }));
  }

  /**
   * Snapshot utilization and misses, per session, from traces: the share of
   * snapshot beliefs cited at least once in the session, and in-turn results
   * that were snapshot-eligible (a durable type, active, recorded by the time
   * of the snapshot, not persona-held) but not in the snapshot.
   */
  async snapshotReport(p: Principal, durableTypes: readonly string[], sessionId: string | null): Promise<SnapshotReportRow[]> {
    const rows = await this.db.query<{ session_id: string; snapshot_size: number; cited: number; in_turn_returned: number; misses: number }>(
      `WITH snapshots AS (
         SELECT DISTINCT ON (t.session_id) t.session_id, t.returned, t.created_at
         FROM recall_traces t
         WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.moment = 'snapshot'
           AND ($3::text IS NULL OR t.session_id = $3::text)
         ORDER BY t.session_id, t.created_at DESC, t.trace_id
       ),
       cited AS (
         SELECT t.session_id, c.belief_id FROM citations c
         JOIN recall_traces t ON t.tenant_id = c.tenant_id AND t.principal_id = c.principal_id AND t.trace_id = c.trace_id
         WHERE c.tenant_id = $1 AND c.principal_id = $2
       ),
       in_turn AS (
         SELECT DISTINCT t.session_id, r.belief_id
         FROM recall_traces t, unnest(t.returned) AS r(belief_id)
         WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.moment = 'in_turn'
       )
       SELECT s.session_id,
         cardinality(s.returned) AS snapshot_size,
         (SELECT count(DISTINCT c.belief_id) FROM cited c WHERE c.session_id = s.session_id AND c.belief_id = ANY(s.returned)) AS cited,
         (SELECT count(*) FROM in_turn i WHERE i.session_id = s.session_id) AS in_turn_returned,
         (SELECT count(*) FROM in_turn i JOIN beliefs b ON b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = i.belief_id
            WHERE i.session_id = s.session_id AND NOT (i.belief_id = ANY(s.returned))
              AND b.belief_type = ANY($4::text[]) AND b.status = 'active'
              -- Eligible when the snapshot was made: recorded by then, and not held by the persona row.
              AND b.recorded_at <= s.created_at
              AND NOT EXISTS (SELECT 1 FROM persona_entries pe
                WHERE pe.tenant_id = b.tenant_id AND pe.principal_id = b.principal_id AND pe.belief_id = b.belief_id)) AS misses
       FROM snapshots s ORDER BY s.session_id`,
      [p.tenantId, p.principalId, sessionId, durableTypes],
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      snapshotSize: Number(r.snapshot_size),
      cited: Number(r.cited),
      utilization: Number(r.snapshot_size) === 0 ? 0 : Number(r.cited) / Number(r.snapshot_size),
      inTurnReturned: Number(r.in_turn_returned),
      misses: Number(r.misses),
    }));
  }

  /** Records a trace with its outbox event and recall misses; false when it was already there. */
  async recordTrace(p: Principal, trace: RecallTrace): Promise<boolean> {
    return this.traces.record(p, trace);
  }

  /** The principal's trace, or null: another principal's trace is simply not found. */
  async getTrace(p: Principal, traceId: string): Promise<RecallTrace | null> {
    return this.traces.get(p, traceId);
  }

  /**
   * The project a session opened in: the current_scope of the session's
   * first snapshot recall, or null when it has none. How Search resolves an
   * omitted scope when the call carries no x-session-scope metadata.
   */
  async sessionSnapshotScope(p: Principal, sessionId: string): Promise<string | null> {
    const rows = await this.db.query<{ scope: string | null }>(
      `SELECT t.query->>'currentScope' AS scope FROM recall_traces t
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.moment = 'snapshot'
       ORDER BY t.created_at, t.trace_id LIMIT 1`,
      [p.tenantId, p.principalId, sessionId],
    );
    return rows[0]?.scope ?? null;
  }
}

function candidates(rows: Row[]): ArmCandidate[] {
  return rows.map((r) => ({ belief: beliefFromRow(r), armScore: Number(r.arm_score) }));
}

/**
 * Locks the principal's head row for this transaction and proposes the next
 * position; `finish(changed)` moves the head only if the write changed
 * something, so an idempotent repeat leaves the snapshot watermark alone.
 */
async function beginWrite(tx: SqlClient, p: Principal) {
  const rows = await tx.query(
    `INSERT INTO principal_heads (tenant_id, principal_id) VALUES ($1, $2)
     ON CONFLICT (tenant_id, principal_id) DO UPDATE SET position = principal_heads.position
     RETURNING position`,
    [p.tenantId, p.principalId],
  );
  const current = Number(rows[0]?.position ?? 0);
  const next = current + 1;
  const lexicon = new LexiconDelta();
  return {
    next,
    /** The BM25 statistics' change by this write, applied by `finish`. */
    lexicon,
    async finish(changed: boolean): Promise<number> {
      await lexicon.apply(tx, p);
      if (!changed) return current;
      await tx.query(
        `UPDATE principal_heads SET position = $3, updated_at = now() WHERE tenant_id = $1 AND principal_id = $2`,
        [p.tenantId, p.principalId, next],
      );
      // Delivered at commit to every sidecar listening (the snapshot cache's head tracker).
      await tx.query("SELECT pg_notify($1, json_build_array($2::text, $3::text, $4::bigint, now())::text)", [
        HEAD_CHANNEL,
        p.tenantId,
        p.principalId,
        next,
      ]);
      return next;
    },
  };
}

async function headIn(tx: SqlClient, p: Principal): Promise<{ position: number }> {
  const rows = await tx.query("SELECT position FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2", [
    p.tenantId,
    p.principalId,
  ]);
  return { position: Number(rows[0]?.position ?? 0) };
}

async function requireBelief(tx: SqlClient, p: Principal, beliefId: string, field: string): Promise<StoredBelief> {
  const rows = await tx.query(
    `SELECT ${BELIEF_COLUMNS} FROM beliefs b WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = $3`,
    [p.tenantId, p.principalId, beliefId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError(`${field}: no such belief`);
  return beliefFromRow(row);
}

async function rejectionsFor(
  tx: SqlClient,
  p: Principal,
  beliefIds: readonly string[],
): Promise<Map<string, RecordedRejection[]>> {
  const rows = await tx.query<{ belief_id: string; kind: RejectionKind; corrected_at: Date | null }>(
    `SELECT r.belief_id::text AS belief_id, r.kind, c.valid_from AS corrected_at
     FROM rejections r
     LEFT JOIN beliefs c ON c.tenant_id = r.tenant_id AND c.principal_id = r.principal_id
       AND c.belief_id = r.correction_belief_id
     WHERE r.tenant_id = $1 AND r.principal_id = $2 AND r.belief_id = ANY($3::uuid[])
     ORDER BY r.created_at, r.rejection_id`,
    [p.tenantId, p.principalId, beliefIds],
  );
  const byBelief = new Map<string, RecordedRejection[]>();
  for (const r of rows) {
    byBelief.set(r.belief_id, [...(byBelief.get(r.belief_id) ?? []), { kind: r.kind, correctedAt: r.corrected_at }]);
  }
  return byBelief;
}

/** A LIKE pattern matching `text` literally. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Inserts or replaces one belief; returns 1 when the row changed, 0 for an identical repeat. */
async function upsertBelief(tx: SqlClient, p: Principal, b: Belief, position: number, lexicon: LexiconDelta): Promise<number> {
  const rows = await tx.query(
    // prev reads the row as it was before this statement (one snapshot for the whole statement).
    `WITH prev AS (
       SELECT lex_lengths FROM beliefs WHERE tenant_id = $1 AND principal_id = $2 AND belief_id = $3
     ),
     up AS (INSERT INTO beliefs AS cur (tenant_id, principal_id, belief_id, subject, statement, belief_type, predicate_key,
       status, confidence, authority, origin_scope, scope_level, portability, sensitivity, valid_from, valid_to,
       recorded_at, retracted_at, supersedes, conflicts_with, evidence_count, last_evidence_at, expires_hint,
       flagged_for_review, source_episode_ids, store_position)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::timestamptz, $16::timestamptz,
       $17::timestamptz, $18::timestamptz, $19::uuid[], $20::uuid[], $21, $22::timestamptz, $23::timestamptz, $24,
       $25::uuid[], $26)
     ON CONFLICT (tenant_id, principal_id, belief_id) DO UPDATE SET
       subject = EXCLUDED.subject, statement = EXCLUDED.statement, belief_type = EXCLUDED.belief_type,
       predicate_key = EXCLUDED.predicate_key, status = EXCLUDED.status, confidence = EXCLUDED.confidence,
       authority = EXCLUDED.authority, origin_scope = EXCLUDED.origin_scope, scope_level = EXCLUDED.scope_level,
       portability = EXCLUDED.portability, sensitivity = EXCLUDED.sensitivity, valid_from = EXCLUDED.valid_from,
       valid_to = EXCLUDED.valid_to, recorded_at = EXCLUDED.recorded_at, retracted_at = EXCLUDED.retracted_at,
       supersedes = EXCLUDED.supersedes, conflicts_with = EXCLUDED.conflicts_with,
       evidence_count = EXCLUDED.evidence_count, last_evidence_at = EXCLUDED.last_evidence_at,
       expires_hint = EXCLUDED.expires_hint, flagged_for_review = EXCLUDED.flagged_for_review,
       source_episode_ids = EXCLUDED.source_episode_ids, store_position = EXCLUDED.store_position
     WHERE (cur.subject, cur.statement, cur.belief_type, cur.predicate_key, cur.status, cur.confidence, cur.authority,
       cur.origin_scope, cur.scope_level, cur.portability, cur.sensitivity, cur.valid_from, cur.valid_to,
       cur.recorded_at, cur.retracted_at, cur.supersedes, cur.conflicts_with, cur.evidence_count,
       cur.last_evidence_at, cur.expires_hint, cur.flagged_for_review, cur.source_episode_ids)
       IS DISTINCT FROM (EXCLUDED.subject, EXCLUDED.statement, EXCLUDED.belief_type, EXCLUDED.predicate_key,
       EXCLUDED.status, EXCLUDED.confidence, EXCLUDED.authority, EXCLUDED.origin_scope, EXCLUDED.scope_level,
       EXCLUDED.portability, EXCLUDED.sensitivity, EXCLUDED.valid_from, EXCLUDED.valid_to, EXCLUDED.recorded_at,
       EXCLUDED.retracted_at, EXCLUDED.supersedes, EXCLUDED.conflicts_with, EXCLUDED.evidence_count,
       EXCLUDED.last_evidence_at, EXCLUDED.expires_hint, EXCLUDED.flagged_for_review, EXCLUDED.source_episode_ids)
     RETURNING cur.lex_lengths)
     SELECT (SELECT prev.lex_lengths FROM prev)::int[] AS lengths_before, up.lex_lengths::int[] AS lengths_after FROM up`,
    [p.tenantId, p.principalId, ...beliefParams(b), position],
  );
  lexicon.changeRows(rows);
  return rows.length;
}

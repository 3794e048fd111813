import { applyRejection, applyRejections, type RecordedRejection } from "../../domain/rejection-replay.js";
import { NotFoundError, InvalidArgumentError } from "../../domain/errors.js";
import type { Belief, Episode, Principal, Rejection, RejectionKind, StoredBelief, SubjectAlias } from "../../domain/model.js";
import { FEEDBACK } from "../../domain/feedback.js";
import { BELIEF_COLUMNS, beliefFromRow, beliefParams } from "./belief-rows.js";
import type { SqlClient } from "../sql-client.js";
import { LexiconDelta } from "./lexicon-stats.js";
import { refreshSourceContext } from "./source-context.js";

/** NOTIFY channel carrying [tenant, principal, position, updated_at] whenever a principal's head moves. */
export const HEAD_CHANNEL = "recall_head";

/**
 * NOTIFY channel carrying [tenant, principal, belief ids | null] when rows
 * change without the head moving (feedback changes utility) or disappear:
 * null means "any of the principal's rows". In-process indexes re-read the
 * ids, or drop the principal's index on null (principal-index/change-feed.ts).
 */
export const ROWS_CHANNEL = "recall_rows_changed";

/**
 * The write side: every statement that changes memory. Each write runs in
 * one transaction that locks the principal's head row, and moves the head
 * (and NOTIFYs it) only when something changed.
 */
export class BeliefWrites {
  constructor(
    private readonly db: SqlClient,
    /** Told how many rows a bulk write changed (PGlite refreshes its planner statistics). */
    private readonly afterBulkWrite: (rows: number) => Promise<void>,
  ) {}


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
      if (recorded > 0) {
        await tx.query("SELECT pg_notify($1, json_build_array($2::text, $3::text, $4::text[])::text)", [
          ROWS_CHANNEL,
          p.tenantId,
          p.principalId,
          [...new Set(beliefIds)],
        ]);
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

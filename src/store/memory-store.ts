import type { Correction, Principal, RecallTrace } from "../domain/model.js";
import { BeliefWrites, HEAD_CHANNEL, ROWS_CHANNEL } from "./beliefs/belief-writes.js";
import { shortIdNeighbours } from "./beliefs/short-id-neighbours.js";
import { InspectStore } from "./inspect-store.js";
import { boundTo } from "./store-deadline.js";
import type { SqlClient } from "./sql-client.js";
import { SqlCandidateSource } from "./candidates/sql-candidates.js";
import { StoreReports, type EpisodeQuery, type SnapshotReportRow } from "./store-reports.js";
import { TraceStore } from "./traces/trace-store.js";

export { HEAD_CHANNEL, ROWS_CHANNEL, type EpisodeQuery, type SnapshotReportRow };
export type { ArmCandidate, LexicalQuery, LexicalScoring, StructuredAnchors } from "../ports/candidate-source.js";

/** Rows written between two statistics refreshes of the embedded store. */
const ANALYZE_EVERY = 2000;

export interface StoreHead {
  position: number;
  updatedAt: Date | null;
  /** The position the principal's last erasure moved the head to; null if it was never erased. */
  erasedPosition: number | null;
}

/**
 * All of recall's SQL, over either store, by side: the writes
 * (store/beliefs/belief-writes.ts), the read arms (store/candidates/sql-candidates.ts), the
 * reports and the event log (store/store-reports.ts) and the traces
 * (store/traces/trace-store.ts). Every method takes the principal first: there is
 * no query path without the isolation predicates.
 */
export class MemoryStore {
  readonly traces: TraceStore;
  readonly writes: BeliefWrites;
  /** The SQL candidate source: what recall reads when the principal index does not hold the principal. */
  readonly candidates: SqlCandidateSource;
  readonly reports: StoreReports;
  /** The inspection API's reads (store/inspect-store.ts). */
  readonly inspect: InspectStore;
  /** `statistics` is shared by every bounded view of one store (`at`). */
  constructor(
    readonly db: SqlClient,
    private readonly statistics = { rowsSinceAnalyze: 0 },
  ) {
    this.traces = new TraceStore(db);
    this.writes = new BeliefWrites(db, (rows) => this.afterBulkWrite(rows));
    this.candidates = new SqlCandidateSource(db);
    this.reports = new StoreReports(db);
    this.inspect = new InspectStore(db);
  }

  /**
   * This store with every statement and transaction bounded by the store
   * deadline `at` (store/store-deadline.ts): how an RPC's store calls are
   * bounded. Undefined: this store, unbounded.
   */
  at(deadline: number | undefined): MemoryStore {
    return deadline === undefined ? this : new MemoryStore(boundTo(this.db, deadline), this.statistics);
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
    this.statistics.rowsSinceAnalyze = 0;
  }

  /** Counts bulk writes and refreshes PGlite's statistics every ANALYZE_EVERY rows. */
  private async afterBulkWrite(rows: number): Promise<void> {
    this.statistics.rowsSinceAnalyze += rows;
    if (this.statistics.rowsSinceAnalyze >= ANALYZE_EVERY) await this.analyzeIfEmbedded();
  }

  /** `deadline`: a store deadline of the caller's own, for the head trackers that share this store. */
  async head(p: Principal, deadline?: number): Promise<StoreHead> {
    const rows = await this.db.query(
      "SELECT position, updated_at, erased_position FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2",
      [p.tenantId, p.principalId],
      { deadline },
    );
    const r = rows[0];
    if (!r) return { position: 0, updatedAt: null, erasedPosition: null };
    const erased = r.erased_position === null ? null : Number(r.erased_position);
    return { position: Number(r.position), updatedAt: (r.updated_at as Date | null) ?? null, erasedPosition: erased };
  }

  /** How many principals other than `p` this store holds memory of (`recall demo --reset` wipes a store only when none). */
  async otherPrincipalCount(p: Principal): Promise<number> {
    const rows = await this.db.query(
      "SELECT count(*) AS n FROM principal_heads WHERE NOT (tenant_id = $1 AND principal_id = $2)",
      [p.tenantId, p.principalId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  // The store's public surface, by side. Writes:
  readonly putBeliefs: BeliefWrites["putBeliefs"] = (...a) => this.writes.putBeliefs(...a);
  readonly appendEpisodes: BeliefWrites["appendEpisodes"] = (...a) => this.writes.appendEpisodes(...a);
  readonly setPersonaEntry: BeliefWrites["setPersonaEntry"] = (...a) => this.writes.setPersonaEntry(...a);
  readonly removePersonaEntry: BeliefWrites["removePersonaEntry"] = (...a) => this.writes.removePersonaEntry(...a);
  readonly putSubjectAliases: BeliefWrites["putSubjectAliases"] = (...a) => this.writes.putSubjectAliases(...a);
  readonly recordCitations: BeliefWrites["recordCitations"] = (...a) => this.writes.recordCitations(...a);
  readonly rejectBelief: BeliefWrites["rejectBelief"] = (...a) => this.writes.rejectBelief(...a);
  // Recall's reads (the SQL candidate source):
  readonly expandSubjects: SqlCandidateSource["expandSubjects"] = (...a) => this.candidates.expandSubjects(...a);
  readonly expandSubjectsEach: SqlCandidateSource["expandSubjectsEach"] = (...a) => this.candidates.expandSubjectsEach(...a);
  readonly structuredCandidates: SqlCandidateSource["structuredCandidates"] = (...a) => this.candidates.structuredCandidates(...a);
  readonly lexicalCandidates: SqlCandidateSource["lexicalCandidates"] = (...a) => this.candidates.lexicalCandidates(...a);
  readonly resolveNamedSubjects: SqlCandidateSource["resolveNamedSubjects"] = (...a) => this.candidates.resolveNamedSubjects(...a);
  readonly deltaCandidates: SqlCandidateSource["deltaCandidates"] = (...a) => this.candidates.deltaCandidates(...a);
  readonly beliefsById: SqlCandidateSource["beliefsById"] = (...a) => this.candidates.beliefsById(...a);
  /** Other beliefs of the principal that share each id's eight-digit short id. */
  readonly shortIdNeighbours = (p: Principal, beliefIds: readonly string[]) => shortIdNeighbours(this.db, p, beliefIds);
  // Reports and the event log:
  readonly episodes: StoreReports["episodes"] = (...a) => this.reports.episodes(...a);
  readonly snapshotReport: StoreReports["snapshotReport"] = (...a) => this.reports.snapshotReport(...a);
  readonly sessionSnapshotScope: StoreReports["sessionSnapshotScope"] = (...a) => this.reports.sessionSnapshotScope(...a);

  /** The corrections to the session's latest snapshot (the SQL source, reading the snapshot's stored trace). */
  async snapshotCorrections(p: Principal, sessionId: string, afterPosition: number, at: Date): Promise<Correction[]> {
    const snapshot = await this.traces.latestSnapshot(p, sessionId);
    return this.candidates.snapshotCorrections(p, snapshot?.returned ?? [], afterPosition, at);
  }

  /** Records a trace with its outbox event and recall misses; false when it was already there. */
  async recordTrace(p: Principal, trace: RecallTrace): Promise<boolean> {
    return this.traces.record(p, trace);
  }

  /** The principal's trace, or null: another principal's trace is simply not found. */
  async getTrace(p: Principal, traceId: string): Promise<RecallTrace | null> {
    return this.traces.get(p, traceId);
  }
}

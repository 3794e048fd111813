-- The per-principal BM25 statistics (principal_lexicon) are kept by the write
-- transaction itself (src/store/lexicon-stats.ts), not by triggers: the tables
-- are meant to be distributed by tenant_id (Citus, docs/scale-out.md), which
-- does not support triggers on distributed tables, least of all statement-level
-- ones with transition tables. See docs/adr/0006-lexicon-statistics-without-triggers-and-pooler-support.md.

DROP TRIGGER beliefs_lexicon_insert ON beliefs;
DROP TRIGGER beliefs_lexicon_update ON beliefs;
DROP TRIGGER beliefs_lexicon_delete ON beliefs;
DROP FUNCTION recall_lexicon_maintain();

-- Counted again from scratch, so nothing the triggers did or missed carries over.
DELETE FROM principal_lexicon;
INSERT INTO principal_lexicon (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
SELECT tenant_id, principal_id, count(*), sum(lex_lengths[1]), sum(lex_lengths[2]), sum(lex_lengths[3]), sum(lex_lengths[4])
FROM beliefs
GROUP BY tenant_id, principal_id;

-- Fleet-wide maintenance (the trace sweeps) runs once per interval across all the
-- sidecars sharing the database: the sidecar whose claim finds the lease expired
-- runs it (src/store/maintenance-lease.ts). A row lock, not an advisory lock, so
-- it works through a transaction-mode pooler and holds no connection. Not a
-- tenant table: on Citus it stays on the coordinator.
CREATE TABLE maintenance_leases (
  name       text        PRIMARY KEY,
  holder     text        NOT NULL,
  expires_at timestamptz NOT NULL
);

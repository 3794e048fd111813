-- recall: storage of the semantic arm, applied only when RECALL_SEMANTIC=on
-- (src/store/semantic-store.ts), never as a numbered migration: the main
-- schema must keep working on a PostgreSQL server without pgvector.
-- Idempotent, so every start may apply it.

CREATE EXTENSION IF NOT EXISTS vector;

-- One embedding per belief, written by the background embedder. A row whose
-- embedder differs from the configured one, or whose statement_md5 no longer
-- matches the belief's statement, is stale: the arm ignores it and the
-- embedder replaces it.
CREATE TABLE IF NOT EXISTS belief_embeddings (
  tenant_id     text        NOT NULL,
  principal_id  text        NOT NULL,
  belief_id     uuid        NOT NULL,
  -- Embedder, model and dimension, e.g. 'openai:text-embedding-3-small:1536'.
  embedder      text        NOT NULL,
  statement_md5 text        NOT NULL,
  -- No fixed dimension: changing the embedder needs no schema change.
  -- No ANN index either: the arm scans one principal's eligible beliefs
  -- exactly, so isolation and eligibility apply before the candidate cap.
  embedding     vector      NOT NULL,
  embedded_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, principal_id, belief_id),
  FOREIGN KEY (tenant_id, principal_id, belief_id) REFERENCES beliefs ON DELETE CASCADE
);

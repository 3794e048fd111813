-- Lexical arm: BM25F over a belief's own words and the text it was learned from.
--
-- lex_tsv is one tsvector with a weight label per field:
--   A subject, B statement      (the belief itself)
--   C source episodes           (the turns the belief cites)
--   D neighbouring episodes     (within two turns of a source, same session)
-- context_tsv (C and D) is maintained at write time by the store, whichever of
-- the belief or its episodes arrives first (src/store/source-context.ts). It is
-- only ever searched, never rendered. The field weights are ranking policy
-- (src/recall/policy.ts), applied at query time, so changing them needs no
-- rewrite of this table.

DROP INDEX beliefs_tsv_idx;
ALTER TABLE beliefs DROP COLUMN tsv;

-- Occurrences (positions) per weight label: {A, B, C, D}.
CREATE FUNCTION recall_lexicon_lengths(doc tsvector) RETURNS bigint[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ARRAY[
    count(*) FILTER (WHERE w = 'A'), count(*) FILTER (WHERE w = 'B'),
    count(*) FILTER (WHERE w = 'C'), count(*) FILTER (WHERE w = 'D')
  ]::bigint[]
  FROM unnest(doc) AS u, unnest(u.weights) AS w
$$;

ALTER TABLE beliefs ADD COLUMN context_tsv tsvector NOT NULL DEFAULT ''::tsvector;
ALTER TABLE beliefs ADD COLUMN lex_tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', subject), 'A') || setweight(to_tsvector('english', statement), 'B') || context_tsv
) STORED;
-- The same document's length per field, for BM25's length normalisation.
ALTER TABLE beliefs ADD COLUMN lex_lengths bigint[] GENERATED ALWAYS AS (recall_lexicon_lengths(
  setweight(to_tsvector('english', subject), 'A') || setweight(to_tsvector('english', statement), 'B') || context_tsv
)) STORED;

CREATE INDEX beliefs_lex_tsv_idx ON beliefs USING gin (tenant_id, principal_id, lex_tsv);
-- Which beliefs cite an episode: looked up when episodes arrive after their beliefs.
CREATE INDEX beliefs_source_episodes_idx ON beliefs USING gin (tenant_id, principal_id, source_episode_ids);

-- BM25 needs the number of documents and their average length per principal.
-- Counted over all of the principal's beliefs, per field label, kept current
-- by statement-level triggers so a bulk write costs one update per principal.
CREATE TABLE principal_lexicon (
  tenant_id    text   NOT NULL,
  principal_id text   NOT NULL,
  docs         bigint NOT NULL DEFAULT 0,
  len_a        bigint NOT NULL DEFAULT 0,
  len_b        bigint NOT NULL DEFAULT 0,
  len_c        bigint NOT NULL DEFAULT 0,
  len_d        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, principal_id)
);



CREATE FUNCTION recall_lexicon_maintain() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO principal_lexicon AS l (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
    SELECT tenant_id, principal_id, -count(*), -sum(n[1]), -sum(n[2]), -sum(n[3]), -sum(n[4])
    FROM (SELECT tenant_id, principal_id, lex_lengths AS n FROM old_rows) o
    GROUP BY tenant_id, principal_id
    ON CONFLICT (tenant_id, principal_id) DO UPDATE SET
      docs = l.docs + EXCLUDED.docs, len_a = l.len_a + EXCLUDED.len_a, len_b = l.len_b + EXCLUDED.len_b,
      len_c = l.len_c + EXCLUDED.len_c, len_d = l.len_d + EXCLUDED.len_d;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO principal_lexicon AS l (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
    SELECT tenant_id, principal_id, count(*), sum(n[1]), sum(n[2]), sum(n[3]), sum(n[4])
    FROM (SELECT tenant_id, principal_id, lex_lengths AS n FROM new_rows) o
    GROUP BY tenant_id, principal_id
    ON CONFLICT (tenant_id, principal_id) DO UPDATE SET
      docs = l.docs + EXCLUDED.docs, len_a = l.len_a + EXCLUDED.len_a, len_b = l.len_b + EXCLUDED.len_b,
      len_c = l.len_c + EXCLUDED.len_c, len_d = l.len_d + EXCLUDED.len_d;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER beliefs_lexicon_insert AFTER INSERT ON beliefs
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_lexicon_maintain();
CREATE TRIGGER beliefs_lexicon_update AFTER UPDATE ON beliefs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_lexicon_maintain();
CREATE TRIGGER beliefs_lexicon_delete AFTER DELETE ON beliefs
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_lexicon_maintain();

-- Existing beliefs: their source context, then the counts (the UPDATE's trigger
-- only adds differences, so the counts are taken from scratch afterwards).
WITH ranked AS (
  SELECT e.tenant_id, e.principal_id, e.episode_id, e.session_id, e.content, e.sensitivity,
    row_number() OVER (PARTITION BY e.tenant_id, e.principal_id, e.session_id
                       ORDER BY e.occurred_at, e.sequence, e.episode_id) AS rn
  FROM episodes e
),
near AS (
  SELECT DISTINCT b.tenant_id, b.principal_id, b.belief_id, r.session_id, r.rn, r.content,
    r.episode_id = ANY(b.source_episode_ids) AS is_source
  FROM beliefs b
  JOIN ranked s ON s.tenant_id = b.tenant_id AND s.principal_id = b.principal_id AND s.episode_id = ANY(b.source_episode_ids)
  JOIN ranked r ON r.tenant_id = s.tenant_id AND r.principal_id = s.principal_id AND r.session_id = s.session_id
    AND abs(r.rn - s.rn) <= 2
  WHERE r.sensitivity <= b.sensitivity
),
ctx AS (
  SELECT tenant_id, principal_id, belief_id,
    COALESCE(setweight(to_tsvector('english', string_agg(content, ' ' ORDER BY session_id, rn) FILTER (WHERE is_source)), 'C'), ''::tsvector)
    || COALESCE(setweight(to_tsvector('english', string_agg(content, ' ' ORDER BY session_id, rn) FILTER (WHERE NOT is_source)), 'D'), ''::tsvector)
      AS tsv
  FROM near GROUP BY tenant_id, principal_id, belief_id
)
UPDATE beliefs b SET context_tsv = ctx.tsv FROM ctx
WHERE b.tenant_id = ctx.tenant_id AND b.principal_id = ctx.principal_id AND b.belief_id = ctx.belief_id;

DELETE FROM principal_lexicon;
INSERT INTO principal_lexicon (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
SELECT tenant_id, principal_id, count(*), sum(n[1]), sum(n[2]), sum(n[3]), sum(n[4])
FROM (SELECT tenant_id, principal_id, lex_lengths AS n FROM beliefs) o
GROUP BY tenant_id, principal_id;

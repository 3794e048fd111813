-- recall: initial schema.
-- tenant_id leads every primary key and index so the tables can later be
-- distributed by tenant_id (Citus). btree_gin lets the full-text and trigram
-- indexes lead with the isolation columns too.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- The monotonic store position of each principal: the snapshot watermark.
-- Every write transaction of a principal moves it by one.
CREATE TABLE principal_heads (
  tenant_id     text        NOT NULL,
  principal_id  text        NOT NULL,
  position      bigint      NOT NULL DEFAULT 0,
  -- Time of the last write that changed something; NULL until then.
  updated_at    timestamptz,
  PRIMARY KEY (tenant_id, principal_id)
);

CREATE TABLE beliefs (
  tenant_id          text             NOT NULL,
  principal_id       text             NOT NULL,
  belief_id          uuid             NOT NULL,
  subject            text             NOT NULL,
  statement          text             NOT NULL,
  belief_type        text             NOT NULL,
  predicate_key      text             NOT NULL DEFAULT '',
  status             text             NOT NULL CHECK (status IN ('active', 'provisional', 'superseded', 'expired')),
  confidence         double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  authority          text             NOT NULL CHECK (authority IN ('user', 'affirmed', 'inferred')),
  origin_scope       text             NOT NULL,
  scope_level        text             NOT NULL CHECK (scope_level IN ('project', 'user', 'global')),
  portability        text             NOT NULL CHECK (portability IN ('portable', 'contextual', 'local')),
  sensitivity        smallint         NOT NULL CHECK (sensitivity BETWEEN 1 AND 4),
  valid_from         timestamptz      NOT NULL,
  valid_to           timestamptz,
  recorded_at        timestamptz      NOT NULL,
  retracted_at       timestamptz,
  supersedes         uuid[]           NOT NULL DEFAULT '{}',
  conflicts_with     uuid[]           NOT NULL DEFAULT '{}',
  evidence_count     integer          NOT NULL DEFAULT 1 CHECK (evidence_count >= 1),
  last_evidence_at   timestamptz      NOT NULL,
  expires_hint       timestamptz,
  flagged_for_review boolean          NOT NULL DEFAULT false,
  source_episode_ids uuid[]           NOT NULL DEFAULT '{}',
  -- Maintained by the read path (feedback), never by formation.
  utility            double precision NOT NULL DEFAULT 0,
  last_used_at       timestamptz,
  -- The principal's store position of the last write that touched this row.
  store_position     bigint           NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', subject), 'A') || setweight(to_tsvector('english', statement), 'B')
  ) STORED,
  PRIMARY KEY (tenant_id, principal_id, belief_id)
);

CREATE INDEX beliefs_subject_idx ON beliefs (tenant_id, principal_id, lower(subject));
CREATE INDEX beliefs_type_idx ON beliefs (tenant_id, principal_id, belief_type);
CREATE INDEX beliefs_position_idx ON beliefs (tenant_id, principal_id, store_position);
CREATE INDEX beliefs_tsv_idx ON beliefs USING gin (tenant_id, principal_id, tsv);
CREATE INDEX beliefs_subject_trgm_idx ON beliefs USING gin (tenant_id, principal_id, lower(subject) gin_trgm_ops);

-- The episodic event log.
CREATE TABLE episodes (
  tenant_id      text        NOT NULL,
  principal_id   text        NOT NULL,
  episode_id     uuid        NOT NULL,
  session_id     text        NOT NULL,
  occurred_at    timestamptz NOT NULL,
  sequence       bigint      NOT NULL DEFAULT 0,
  actor          text        NOT NULL DEFAULT '',
  kind           text        NOT NULL DEFAULT '',
  content        text        NOT NULL,
  project        text        NOT NULL DEFAULT '',
  archival       boolean     NOT NULL DEFAULT false,
  sensitivity    smallint    NOT NULL CHECK (sensitivity BETWEEN 1 AND 4),
  store_position bigint      NOT NULL,
  PRIMARY KEY (tenant_id, principal_id, episode_id)
);

CREATE INDEX episodes_session_idx ON episodes (tenant_id, principal_id, session_id, occurred_at, sequence, episode_id);
CREATE INDEX episodes_time_idx ON episodes (tenant_id, principal_id, occurred_at, sequence, episode_id);

-- Beliefs the owner affirmed into the persona row; excluded from snapshots.
CREATE TABLE persona_entries (
  tenant_id    text        NOT NULL,
  principal_id text        NOT NULL,
  belief_id    uuid        NOT NULL,
  set_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, principal_id, belief_id)
);

-- Other names of a subject. alias_key is lower(alias).
CREATE TABLE subject_aliases (
  tenant_id    text NOT NULL,
  principal_id text NOT NULL,
  alias_key    text NOT NULL,
  alias        text NOT NULL,
  subject      text NOT NULL,
  PRIMARY KEY (tenant_id, principal_id, alias_key)
);

CREATE INDEX subject_aliases_subject_idx ON subject_aliases (tenant_id, principal_id, lower(subject));

-- One row per recall: recorded in the pass that rendered the block.
CREATE TABLE recall_traces (
  tenant_id                 text        NOT NULL,
  principal_id              text        NOT NULL,
  trace_id                  uuid        NOT NULL,
  session_id                text        NOT NULL DEFAULT '',
  run_id                    text        NOT NULL DEFAULT '',
  turn_id                   text        NOT NULL DEFAULT '',
  moment                    text        NOT NULL CHECK (moment IN ('snapshot', 'in_turn', 'child_run')),
  query                     jsonb       NOT NULL,
  surface_id                text        NOT NULL DEFAULT '',
  sensitivity_ceiling       smallint    NOT NULL,
  rendered_sha256           text        NOT NULL,
  as_of                     timestamptz NOT NULL,
  returned                  uuid[]      NOT NULL,
  dropped_for_budget_count  integer     NOT NULL,
  blocked                   uuid[]      NOT NULL,
  carried_in                uuid[]      NOT NULL,
  retrieval_policy_version  text        NOT NULL,
  created_at                timestamptz NOT NULL,
  operator_fields_expire_at timestamptz NOT NULL,
  -- Operator tier: nulled after operator_fields_expire_at.
  arm_latencies_ms          jsonb,
  candidates                integer,
  dropped_for_budget        uuid[],
  ranked                    jsonb,
  PRIMARY KEY (tenant_id, principal_id, trace_id)
);

CREATE INDEX recall_traces_turn_idx ON recall_traces (tenant_id, principal_id, turn_id);
CREATE INDEX recall_traces_session_idx ON recall_traces (tenant_id, principal_id, session_id);
CREATE INDEX recall_traces_expiry_idx ON recall_traces (tenant_id, operator_fields_expire_at) WHERE candidates IS NOT NULL;

-- Which rendered beliefs the model cited, per trace.
CREATE TABLE citations (
  tenant_id    text        NOT NULL,
  principal_id text        NOT NULL,
  trace_id     uuid        NOT NULL,
  belief_id    uuid        NOT NULL,
  cited_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, principal_id, trace_id, belief_id)
);

-- Rejections are durable events, replayed whenever a belief is re-derived.
CREATE TABLE rejections (
  tenant_id    text        NOT NULL,
  principal_id text        NOT NULL,
  rejection_id uuid        NOT NULL,
  belief_id    uuid        NOT NULL,
  kind         text        NOT NULL CHECK (kind IN ('unspecified', 'not_true', 'changed', 'not_here')),
  correction_belief_id uuid,
  scope        text        NOT NULL DEFAULT '',
  reason       text        NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, principal_id, rejection_id)
);

CREATE INDEX rejections_belief_idx ON rejections (tenant_id, principal_id, belief_id);

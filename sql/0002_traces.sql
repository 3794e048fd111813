-- recall: traces you can trust. User-safe trace fields that outlive the
-- operator window, citations per turn, the memory.recalled outbox and the
-- feedback tables formation reads. tenant_id still leads every key and index.

-- User-safe fields of the trace (they live as long as the session):
--   considered_not_shown: candidates that were considered and not rendered (a count, never ids);
--   carried:              rendered ids attributed to another project ("(learned in ...)");
--   returned_bands:       the confidence band each returned id was rendered with, in rendered order.
-- carried_in now holds only the carried ids the model then cited: promotion candidates.
-- feedback_settled_at is set once the uncited-utility sweep has charged the trace's returns.
ALTER TABLE recall_traces
  ADD COLUMN considered_not_shown integer NOT NULL DEFAULT 0,
  ADD COLUMN carried              uuid[]  NOT NULL DEFAULT '{}',
  ADD COLUMN returned_bands       text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN feedback_settled_at  timestamptz;

-- Traces written before this migration recorded every rendered carried id in carried_in.
UPDATE recall_traces t SET
  carried = t.carried_in,
  carried_in = ARRAY(
    SELECT DISTINCT c.belief_id FROM citations c
    WHERE c.tenant_id = t.tenant_id AND c.principal_id = t.principal_id AND c.trace_id = t.trace_id
      AND c.belief_id = ANY(t.carried_in)
    ORDER BY c.belief_id
  );

CREATE INDEX recall_traces_feedback_idx ON recall_traces (tenant_id, created_at) WHERE feedback_settled_at IS NULL;

-- A citation belongs to the turn it was made in: a snapshot trace is read by every
-- turn of its session, and the user view marks a belief "used" only for its own turn.
ALTER TABLE citations ADD COLUMN turn_id text NOT NULL DEFAULT '';
UPDATE citations c SET turn_id = t.turn_id FROM recall_traces t
  WHERE t.tenant_id = c.tenant_id AND t.principal_id = c.principal_id AND t.trace_id = c.trace_id;
ALTER TABLE citations DROP CONSTRAINT citations_pkey;
ALTER TABLE citations ADD PRIMARY KEY (tenant_id, principal_id, trace_id, belief_id, turn_id);

-- The memory.recalled outbox: one row per recorded trace, written in the trace's
-- transaction, for a consumer to read in created_at order and mark published.
-- The payload holds ids and counts, never belief text.
CREATE TABLE recalled_events (
  tenant_id    text        NOT NULL,
  principal_id text        NOT NULL,
  trace_id     uuid        NOT NULL,
  session_id   text        NOT NULL DEFAULT '',
  payload      jsonb       NOT NULL,
  created_at   timestamptz NOT NULL,
  published_at timestamptz,
  PRIMARY KEY (tenant_id, principal_id, trace_id)
);

CREATE INDEX recalled_events_pending_idx ON recalled_events (tenant_id, principal_id, created_at, trace_id)
  WHERE published_at IS NULL;
CREATE INDEX recalled_events_session_idx ON recalled_events (tenant_id, principal_id, session_id);

-- Recall misses: a subject queried with nothing about it rendered. Repeated misses
-- make a targeted re-derivation hint for formation; a later hit clears the row.
-- subject_key is the lower-cased canonical subject (after aliases).
CREATE TABLE rederivation_hints (
  tenant_id       text        NOT NULL,
  principal_id    text        NOT NULL,
  subject_key     text        NOT NULL,
  subject         text        NOT NULL,
  misses          integer     NOT NULL,
  first_missed_at timestamptz NOT NULL,
  last_missed_at  timestamptz NOT NULL,
  last_trace_id   uuid        NOT NULL,
  PRIMARY KEY (tenant_id, principal_id, subject_key)
);

CREATE INDEX rederivation_hints_misses_idx ON rederivation_hints (tenant_id, principal_id, misses);

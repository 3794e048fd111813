-- recall: deliberate lookup (memory.search) and the episodic path (RecallEpisodes).
-- Searches and episode reads are traced in recall_traces like every recall, so
-- they share its isolation columns, its retention and its delete path. A
-- RecallEpisodes trace has moment 'in_turn' (it is an in-turn tool call), an
-- empty belief query, and its own episode query and returned episode ids.

ALTER TABLE recall_traces
  -- The agent tool that made the call: 'memory.search@2.1.0', 'memory.recall_episodes@1'; '' for Recall.
  ADD COLUMN tool              text   NOT NULL DEFAULT '',
  -- RecallEpisodes only: the episode query as it ran.
  ADD COLUMN episode_query     jsonb,
  -- RecallEpisodes only: the episode ids returned, in order.
  ADD COLUMN returned_episodes uuid[] NOT NULL DEFAULT '{}',
  -- The escalation signal returned with a recall or search result, if any.
  ADD COLUMN episode_advice    jsonb;

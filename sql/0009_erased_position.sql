-- Erasure (ErasePrincipal) moves a principal's head forward and records the
-- position it moved to here. Rows deleted by an erasure are not a delta, so
-- anything derived from a principal's rows below a position (an in-process
-- index, a cache) compares this with its own position when it reads the
-- head: a larger erased_position means rebuild, not catch up. It survives a
-- missed NOTIFY. NULL: never erased.
ALTER TABLE principal_heads ADD COLUMN erased_position bigint;

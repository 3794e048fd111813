import { BELIEF_COLUMNS } from "../store/beliefs/belief-rows.js";

/**
 * The baseline the sidecar is compared with: the single full-text candidate
 * query an application would run itself. A copy of the shape of the lexical
 * arm's SQL (MemoryStore.lexicalCandidates with the hard filter of
 * store/candidates/eligibility-sql.ts, in-turn defaults) taken when the benchmark was
 * written: a fixed reference, deliberately not the store's code, so later
 * ranking changes show up as a change of the ratio.
 */
export const RAW_LEXICAL_SQL = `SELECT ${BELIEF_COLUMNS}, ts_rank(b.lex_tsv, q.query)::float8 AS arm_score
  FROM beliefs b, to_tsquery('english', $9) AS q(query)
  WHERE b.tenant_id = $1
    AND b.principal_id = $2
    AND b.sensitivity <= $3
    AND b.status = ANY($4::text[])
    AND b.valid_from <= $5::timestamptz
    AND (b.valid_to IS NULL OR b.valid_to > $5::timestamptz)
    AND b.recorded_at <= $6::timestamptz
    AND (b.retracted_at IS NULL OR b.retracted_at > $6::timestamptz)
    AND (b.portability <> 'local' OR b.origin_scope = $7 OR lower(b.subject) = ANY($8::text[]))
    AND b.lex_tsv @@ q.query
  ORDER BY arm_score DESC, b.belief_id
  LIMIT $10`;

/** Parameters of RAW_LEXICAL_SQL for one query, as an in-turn recall would bind them. */
export function rawLexicalParams(input: {
  tenant: string;
  principal: string;
  terms: readonly string[];
  subjects: readonly string[];
  currentScope: string;
  now: Date;
  /** The personal ceiling (2), the sidecar's default. */
  sensitivityCeiling?: number;
  cap?: number;
}): unknown[] {
  const now = input.now.toISOString();
  return [
    input.tenant,
    input.principal,
    input.sensitivityCeiling ?? 2,
    ["active", "provisional"],
    now,
    now,
    input.currentScope,
    input.subjects.map((s) => s.toLowerCase()),
    input.terms.join(" | "),
    input.cap ?? 200,
  ];
}

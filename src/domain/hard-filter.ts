import type { BeliefStatus, Principal, RecallQuery, SensitivityLevel, StoredBelief } from "./model.js";

/**
 * Step 2 of the pipeline: what a belief must satisfy to be seen at all.
 * Tenant, principal and the sensitivity ceiling are isolation; lifecycle,
 * validity and the local-portability rule are eligibility. The store turns
 * this into a SQL predicate applied before any scoring or candidate cap
 * (store/candidates/eligibility-sql.ts); nothing here is ever a rank feature.
 */
export interface EligibilityFilter {
  readonly principal: Principal;
  readonly sensitivityCeiling: SensitivityLevel;
  /** Valid time: valid_from <= asOf < valid_to. */
  readonly asOf: Date;
  /** Transaction time: recorded_at <= knownAt < retracted_at. */
  readonly knownAt: Date;
  readonly statuses: readonly BeliefStatus[];
  /**
   * A historical query (see isHistorical): superseded and expired beliefs are
   * not excluded by their current status; valid time and transaction time
   * decide. Beliefs the user rejected as not true by knownAt stay out.
   */
  readonly historical: boolean;
  /** Local beliefs from other projects are excluded unless their subject is named. */
  readonly currentScope: string;
  /** Lower-cased, alias-expanded subjects the query names explicitly. */
  readonly namedSubjects: readonly string[];
  /** AND filter on belief_type; empty means any type. */
  readonly beliefTypes: readonly string[];
  /** Snapshot only: beliefs whose persona entry stands are excluded. */
  readonly excludePersonaHeld: boolean;
  /** Snapshot only: dated facts past their expires_hint never enter a current snapshot. */
  readonly excludeExpiredDated: boolean;
}

export function eligibilityFilter(
  principal: Principal,
  query: RecallQuery,
  sensitivityCeiling: SensitivityLevel,
  namedSubjects: readonly string[],
  options: { now: Date; excludePersonaHeld: boolean },
): EligibilityFilter {
  const historical = isHistorical(query, options.now);
  const statuses: BeliefStatus[] = ["active"];
  if (query.includeProvisional) statuses.push("provisional");
  if (historical) statuses.push("superseded", "expired");
  return {
    principal,
    sensitivityCeiling,
    asOf: query.asOf ?? options.now,
    knownAt: query.knownAt ?? options.now,
    statuses,
    historical,
    currentScope: query.currentScope,
    namedSubjects,
    beliefTypes: query.beliefTypes,
    excludePersonaHeld: options.excludePersonaHeld,
    excludeExpiredDated: options.excludePersonaHeld && query.asOf === null,
  };
}

/**
 * A query is historical when it asks about the past: an as_of or known_at
 * before now, or include_superseded. A belief's status is its lifecycle
 * *today* (superseded since, expired since); what held at as_of and what was
 * recorded by known_at are the validity interval and the transaction-time
 * interval, so a historical query is judged by those alone. Live recall
 * (no past coordinates) keeps excluding superseded and expired beliefs.
 */
export function isHistorical(query: Pick<RecallQuery, "asOf" | "knownAt" | "includeSuperseded">, now: Date): boolean {
  if (query.includeSuperseded) return true;
  if (query.asOf !== null && query.asOf.getTime() < now.getTime()) return true;
  return query.knownAt !== null && query.knownAt.getTime() < now.getTime();
}

/**
 * A belief that passed a historical filter held at as_of, so it is ranked
 * and banded with the lifecycle it had then: a belief superseded or expired
 * since was in force at the time. Provisional stays provisional. The status
 * reported to the caller is left as it is today.
 */
export function asHeldThen<T extends StoredBelief>(belief: T, historical: boolean): T {
  if (!historical || (belief.status !== "superseded" && belief.status !== "expired")) return belief;
  return { ...belief, status: "active" };
}

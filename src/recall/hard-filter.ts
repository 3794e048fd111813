import type { BeliefStatus, Principal, RecallQuery, SensitivityLevel } from "../domain/model.js";

/**
 * Step 2 of the pipeline: what a belief must satisfy to be seen at all.
 * Tenant, principal and the sensitivity ceiling are isolation; lifecycle,
 * validity and the local-portability rule are eligibility. The store turns
 * this into a SQL predicate applied before any scoring or candidate cap
 * (store/eligibility-sql.ts); nothing here is ever a rank feature.
 */
export interface EligibilityFilter {
  readonly principal: Principal;
  readonly sensitivityCeiling: SensitivityLevel;
  /** Valid time: valid_from <= asOf < valid_to. */
  readonly asOf: Date;
  /** Transaction time: recorded_at <= knownAt < retracted_at. */
  readonly knownAt: Date;
  readonly statuses: readonly BeliefStatus[];
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
  const statuses: BeliefStatus[] = ["active"];
  if (query.includeProvisional) statuses.push("provisional");
  if (query.includeSuperseded) statuses.push("superseded", "expired");
  return {
    principal,
    sensitivityCeiling,
    asOf: query.asOf ?? options.now,
    knownAt: query.knownAt ?? options.now,
    statuses,
    currentScope: query.currentScope,
    namedSubjects,
    beliefTypes: query.beliefTypes,
    excludePersonaHeld: options.excludePersonaHeld,
    excludeExpiredDated: options.excludePersonaHeld && query.asOf === null,
  };
}

import type { StoredBelief } from "../domain/model.js";
import type { EligibilityFilter } from "../recall/hard-filter.js";
import type { IndexedBelief } from "./loading.js";

/**
 * The hard filter in process: the same predicates as store/eligibility-sql.ts,
 * one for one, applied to a belief before any arm scores or caps it. Tenant
 * and principal are not per-row predicates here because an index holds one
 * principal's rows only (principal-index.ts refuses any other identity).
 */
export function isEligible(
  ib: IndexedBelief,
  f: EligibilityFilter,
  personaHeld: ReadonlySet<string>,
  /** The beliefs naming this one in their supersedes; undefined when none does (most beliefs). */
  successors: (beliefId: string) => readonly StoredBelief[] | undefined = () => undefined,
): boolean {
  const b = ib.belief;
  const asOf = f.asOf.getTime();
  const knownAt = f.knownAt.getTime();
  if (b.sensitivity > f.sensitivityCeiling) return false;
  if (!f.statuses.includes(b.status)) return false;
  if (b.validFrom.getTime() > asOf) return false;
  if (b.validTo !== null && b.validTo.getTime() <= asOf) return false;
  if (b.recordedAt.getTime() > knownAt) return false;
  if (b.retractedAt !== null && b.retractedAt.getTime() <= knownAt) return false;
  if (b.portability === "local" && b.originScope !== f.currentScope && !f.namedSubjects.includes(ib.subjectKey)) return false;
  // Historical: a belief rejected as not true is kept out from the moment of that rejection.
  if (f.historical && ib.notTrueSinceUs !== null && ib.notTrueSinceUs <= knownAt * 1000) return false;
  if (f.beliefTypes.length > 0 && !f.beliefTypes.includes(b.beliefType)) return false;
  if (f.excludePersonaHeld && personaHeld.has(b.beliefId)) return false;
  if (f.excludeExpiredDated && b.expiresHint !== null && b.expiresHint.getTime() <= asOf) return false;
  const named = successors(b.beliefId);
  if (named !== undefined) for (const n of named) if (successorInForce(n, b.beliefId, asOf, knownAt)) return false;
  return true;
}

/**
 * successorInForceSql (store/eligibility-sql.ts) in process: `n`, a belief
 * of the same principal naming `oldId` in its supersedes, has replaced it at
 * (asOf, knownAt) when it is not `oldId` itself, is not expired, has begun
 * by asOf and is on record at knownAt. Times in milliseconds.
 */
export function successorInForce(n: StoredBelief, oldId: string, asOf: number, knownAt: number): boolean {
  return (
    n.beliefId !== oldId &&
    n.status !== "expired" &&
    n.validFrom.getTime() <= asOf &&
    n.recordedAt.getTime() <= knownAt &&
    (n.retractedAt === null || n.retractedAt.getTime() > knownAt)
  );
}

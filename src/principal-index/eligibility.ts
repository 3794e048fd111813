import type { StoredBelief } from "../domain/model.js";
import type { EligibilityFilter } from "../recall/hard-filter.js";
import type { IndexedBelief } from "./loading.js";

/**
 * The hard filter in process: the same predicates as store/eligibility-sql.ts,
 * one for one, applied to a belief before any arm scores or caps it. Times
 * are compared in epoch milliseconds (IndexedBelief.times; a missing end is
 * +∞). Tenant and principal are not per-row predicates here because an index
 * holds one principal's rows only (principal-index.ts refuses any other
 * identity).
 */
export function eligibilityTest(
  f: EligibilityFilter,
  personaHeld: ReadonlySet<string>,
  /** The beliefs naming this one in their supersedes; undefined when none does (most beliefs). */
  successors: (beliefId: string) => readonly StoredBelief[] | undefined = () => undefined,
): (ib: IndexedBelief) => boolean {
  // Read once per recall, not once per belief: a common word matches thousands of them.
  const asOf = f.asOf.getTime();
  const knownAt = f.knownAt.getTime();
  const statuses = new Set<string>(f.statuses);
  const types = f.beliefTypes.length > 0 ? new Set<string>(f.beliefTypes) : null;
  const named = new Set(f.namedSubjects);
  const { sensitivityCeiling, currentScope, historical, excludePersonaHeld, excludeExpiredDated } = f;
  return (ib) => {
    const b = ib.belief;
    const t = ib.times;
    if (b.sensitivity > sensitivityCeiling) return false;
    if (!statuses.has(b.status)) return false;
    if (t.validFrom > asOf) return false;
    if (t.validTo <= asOf) return false;
    if (t.recordedAt > knownAt) return false;
    if (t.retractedAt <= knownAt) return false;
    if (b.portability === "local" && b.originScope !== currentScope && !named.has(ib.subjectKey)) return false;
    // Historical: a belief rejected as not true is kept out from the moment of that rejection.
    if (historical && ib.notTrueSinceUs !== null && ib.notTrueSinceUs <= knownAt * 1000) return false;
    if (types !== null && !types.has(b.beliefType)) return false;
    if (excludePersonaHeld && personaHeld.has(b.beliefId)) return false;
    if (excludeExpiredDated && t.expiresHint <= asOf) return false;
    const replacing = successors(b.beliefId);
    if (replacing !== undefined) for (const n of replacing) if (successorInForce(n, b.beliefId, asOf, knownAt)) return false;
    return true;
  };
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

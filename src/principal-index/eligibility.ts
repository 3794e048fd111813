import type { StoredBelief } from "../domain/model.js";
import type { EligibilityFilter } from "../recall/hard-filter.js";
import type { BeliefColumns } from "./columns.js";

/**
 * The hard filter in process: the same predicates as store/eligibility-sql.ts,
 * one for one, applied to a belief (by its ordinal, over BeliefColumns)
 * before any arm scores or caps it. Times are compared in epoch
 * milliseconds (a missing end is +∞). Tenant and principal are not per-row
 * predicates here because an index holds one principal's rows only
 * (principal-index.ts refuses any other identity).
 */
export function eligibilityTest(
  f: EligibilityFilter,
  c: BeliefColumns,
  /** The beliefs naming this one (by ordinal) in their supersedes; undefined when none does. */
  successors: (ord: number) => readonly StoredBelief[] | undefined,
  beliefId: (ord: number) => string,
): (ord: number) => boolean {
  // Read once per recall, not once per belief: a common word matches thousands of them.
  const asOf = f.asOf.getTime();
  const knownAt = f.knownAt.getTime();
  const knownAtUs = knownAt * 1000;
  const statusOk = allowed(c.statuses.size, f.statuses.map((s) => c.statuses.find(s)));
  const typeOk = f.beliefTypes.length > 0 ? allowed(c.types.size, f.beliefTypes.map((t) => c.types.find(t))) : null;
  const named = new Set(f.namedSubjects.map((s) => c.subjects.find(s)));
  const scope = c.scopes.find(f.currentScope);
  const { sensitivityCeiling, historical, excludePersonaHeld, excludeExpiredDated } = f;
  const { sensitivity, status, beliefType, local, originScope, subject, validFrom, validTo, recordedAt, retractedAt, expiresHint } = c;
  const { notTrueSinceUs, personaHeld, mayBeSuperseded } = c;
  return (o) => {
    if (sensitivity[o]! > sensitivityCeiling) return false;
    if (statusOk[status[o]!] !== 1) return false;
    if (validFrom[o]! > asOf) return false;
    if (validTo[o]! <= asOf) return false;
    if (recordedAt[o]! > knownAt) return false;
    if (retractedAt[o]! <= knownAt) return false;
    if (local[o] === 1 && originScope[o] !== scope && !named.has(subject[o]!)) return false;
    // Historical: a belief rejected as not true is kept out from the moment of that rejection.
    if (historical && notTrueSinceUs[o]! <= knownAtUs) return false;
    if (typeOk !== null && typeOk[beliefType[o]!] !== 1) return false;
    if (excludePersonaHeld && personaHeld[o] === 1) return false;
    if (excludeExpiredDated && expiresHint[o]! <= asOf) return false;
    if (mayBeSuperseded[o] === 1) {
      const id = beliefId(o);
      for (const n of successors(o) ?? []) if (successorInForce(n, id, asOf, knownAt)) return false;
    }
    return true;
  };
}

/** A table by interned id: 1 for each of `ids` (-1, a value no belief has, is left out). */
function allowed(size: number, ids: readonly number[]): Uint8Array {
  const table = new Uint8Array(size);
  for (const id of ids) if (id >= 0) table[id] = 1;
  return table;
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

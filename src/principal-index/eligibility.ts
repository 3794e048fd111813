import type { StoredBelief } from "../domain/model.js";
import type { EligibilityFilter } from "../domain/hard-filter.js";
import type { BeliefColumns } from "./columns.js";
import { ELIGIBLE, IF_NAMED, INELIGIBLE, type FilterVerdicts, type Verdict } from "./verdict-memo.js";

/**
 * The hard filter in process: the same predicates as store/candidates/eligibility-sql.ts,
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
  /** The filter's remembered verdicts (verdict-memo.ts), when it is a live one. */
  memo: FilterVerdicts | null = null,
): (ord: number) => boolean {
  const judge = verdictTest(f, c, successors, beliefId);
  const named = new Set(f.namedSubjects.map((s) => c.subjects.find(s)));
  const subject = c.subject;
  const settled = (o: number, v: Verdict) => v === ELIGIBLE || (v === IF_NAMED && named.has(subject[o]!));
  if (memo === null) return (o) => settled(o, judge(o));
  const { verdicts } = memo;
  return (o) => {
    let v = verdicts[o] as Verdict | 0;
    if (v === 0) {
      v = judge(o);
      memo.remember(o, v, c);
    }
    return settled(o, v);
  };
}

/**
 * Every predicate but the named-subject exception: a local belief of another
 * project is IF_NAMED, eligible only in a recall that names its subject.
 */
function verdictTest(
  f: EligibilityFilter,
  c: BeliefColumns,
  successors: (ord: number) => readonly StoredBelief[] | undefined,
  beliefId: (ord: number) => string,
): (ord: number) => Verdict {
  // Read once per recall, not once per belief: a common word matches thousands of them.
  const asOf = f.asOf.getTime();
  const knownAt = f.knownAt.getTime();
  const knownAtUs = knownAt * 1000;
  const statusOk = allowed(c.statuses.size, f.statuses.map((s) => c.statuses.find(s)));
  const typeOk = f.beliefTypes.length > 0 ? allowed(c.types.size, f.beliefTypes.map((t) => c.types.find(t))) : null;
  const scope = c.scopes.find(f.currentScope);
  const { sensitivityCeiling, historical, excludePersonaHeld, excludeExpiredDated } = f;
  const { sensitivity, status, beliefType, local, originScope, validFrom, validTo, recordedAt, retractedAt, expiresHint } = c;
  const { notTrueSinceUs, personaHeld, mayBeSuperseded } = c;
  return (o) => {
    if (sensitivity[o]! > sensitivityCeiling) return INELIGIBLE;
    if (statusOk[status[o]!] !== 1) return INELIGIBLE;
    if (validFrom[o]! > asOf) return INELIGIBLE;
    if (validTo[o]! <= asOf) return INELIGIBLE;
    if (recordedAt[o]! > knownAt) return INELIGIBLE;
    if (retractedAt[o]! <= knownAt) return INELIGIBLE;
    // Historical: a belief rejected as not true is kept out from the moment of that rejection.
    if (historical && notTrueSinceUs[o]! <= knownAtUs) return INELIGIBLE;
    if (typeOk !== null && typeOk[beliefType[o]!] !== 1) return INELIGIBLE;
    if (excludePersonaHeld && personaHeld[o] === 1) return INELIGIBLE;
    if (excludeExpiredDated && expiresHint[o]! <= asOf) return INELIGIBLE;
    if (mayBeSuperseded[o] === 1) {
      const id = beliefId(o);
      for (const n of successors(o) ?? []) if (successorInForce(n, id, asOf, knownAt)) return INELIGIBLE;
    }
    return local[o] === 1 && originScope[o] !== scope ? IF_NAMED : ELIGIBLE;
  };
}

/** A table by interned id: 1 for each of `ids` (-1, a value no belief has, is left out). */
function allowed(size: number, ids: readonly number[]): Uint8Array {
  const table = new Uint8Array(size);
  for (const id of ids) if (id >= 0) table[id] = 1;
  return table;
}

/**
 * successorInForceSql (store/candidates/eligibility-sql.ts) in process: `n`, a belief
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

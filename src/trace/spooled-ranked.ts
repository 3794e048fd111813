import type { Principal, RecalledBelief } from "../domain/model.js";
import { rankedTextSha256, type CompactRankedBelief, type SpooledRecord, type SpooledTrace } from "./spool-record.js";

/**
 * A spooled trace's ranked list keeps each item's scores and flags and, in
 * place of its subject and statement, their hash (spool-record.ts). Before
 * the trace is written they are joined back from the beliefs table, under
 * the trace's own tenant and principal, so the stored trace is the one the
 * recall made. A belief rewritten or erased in between no longer has the
 * texts it was ranked with: its item is written with empty texts (and
 * counted), never with texts it was not ranked with.
 */

/** The principal's current subject and statement of each belief asked for. */
export type BeliefTexts = (principal: Principal, beliefIds: readonly string[]) => Promise<ReadonlyMap<string, { subject: string; statement: string }>>;

export interface JoinedBatch {
  batch: SpooledTrace[];
  /** Items whose belief no longer holds the texts it was ranked with. */
  unmatched: number;
}

export async function joinRankedTexts(records: readonly SpooledRecord[], texts: BeliefTexts): Promise<JoinedBatch> {
  // One lookup per principal of the batch (a sidecar's batch is almost always one).
  const wanted = new Map<string, { principal: Principal; ids: Set<string> }>();
  for (const { principal, trace } of records) {
    for (const item of trace.ranked ?? []) {
      if (!isCompact(item)) continue;
      const key = JSON.stringify([principal.tenantId, principal.principalId]);
      const entry = wanted.get(key) ?? wanted.set(key, { principal, ids: new Set() }).get(key)!;
      entry.ids.add(item.beliefId);
    }
  }
  const found = new Map<string, ReadonlyMap<string, { subject: string; statement: string }>>();
  for (const [key, { principal, ids }] of wanted) found.set(key, await texts(principal, [...ids]));
  let unmatched = 0;
  const batch = records.map(({ principal, trace }): SpooledTrace => {
    const own = found.get(JSON.stringify([principal.tenantId, principal.principalId]));
    if (!own || trace.ranked === null) return { principal, trace: trace as SpooledTrace["trace"] };
    const ranked = trace.ranked.map((item): RecalledBelief => {
      if (!isCompact(item)) return item;
      const { textSha256, ...rest } = item;
      const text = own.get(item.beliefId);
      if (text && rankedTextSha256(text.subject, text.statement) === textSha256) return { ...rest, subject: text.subject, statement: text.statement };
      unmatched += 1;
      return { ...rest, subject: "", statement: "" };
    });
    return { principal, trace: { ...trace, ranked } };
  });
  return { batch, unmatched };
}

function isCompact(item: RecalledBelief | CompactRankedBelief): item is CompactRankedBelief {
  return "textSha256" in item;
}

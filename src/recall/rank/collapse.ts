import { lowerSubjectOf, type WithRowMemo } from "../../ports/row-memo.js";
import { StringMemo } from "../../domain/string-memo.js";

/**
 * Step 6: collapse and diversify, over ranked candidates (best first).
 * - Supersession: per (subject, belief_type, predicate_key) only the belief
 *   valid at as_of survives, and nothing is shown beside a belief it replaced.
 * - Conflicts: partners linked by conflicts_with (read in both directions) are
 *   kept together and marked, never silently resolved.
 * - Per-subject cap, with conflict partners exempt.
 * - Exact restatements: the higher-scored copy stays. Merely similar items
 *   are not removed here: the near-duplicate penalty (rank.ts) has already
 *   demoted them below the item they resemble.
 */

export interface Collapsible extends WithRowMemo {
  beliefId: string;
  subject: string;
  statement: string;
  beliefType: string;
  predicateKey: string;
  supersedes: readonly string[];
  conflictsWith: readonly string[];
  validFrom: Date;
}

export interface Collapsed<T> {
  kept: T[];
  /** Conflict partners of each kept belief that are also kept, sorted. */
  conflicts: Map<string, string[]>;
  /** Ids removed and why (operators read this in the trace's ranked list). */
  removed: Map<string, "superseded" | "restatement" | "subject_cap">;
}

export function collapse<T extends Collapsible>(ranked: readonly T[], perSubjectCap: number): Collapsed<T> {
  const removed = new Map<string, "superseded" | "restatement" | "subject_cap">();
  const present = new Set(ranked.map((b) => b.beliefId));

  // Anything replaced by a present belief goes, whichever ranked higher.
  const replaced = new Set(ranked.flatMap((b) => b.supersedes.filter((id) => present.has(id))));

  // Partners in both directions, among present beliefs.
  const partners = new Map<string, Set<string>>();
  for (const b of ranked) {
    for (const other of b.conflictsWith) {
      if (!present.has(other) || other === b.beliefId) continue;
      partnersOf(partners, b.beliefId).add(other);
      partnersOf(partners, other).add(b.beliefId);
    }
  }

  // Only beliefs with a predicate key have revisions: the others need no key.
  const revisionKeys = ranked.map((b) => (b.predicateKey ? `${b.subject.toLowerCase()}\u0000${b.beliefType}\u0000${b.predicateKey}` : ""));
  const latestPerKey = new Map<string, T>();
  ranked.forEach((b, i) => {
    const key = revisionKeys[i]!;
    if (key === "") return;
    const best = latestPerKey.get(key);
    if (!best || b.validFrom.getTime() > best.validFrom.getTime()) latestPerKey.set(key, b);
  });

  const kept: T[] = [];
  const statements = new Set<string>();
  const perSubject = new Map<string, number>();
  for (const [i, b] of ranked.entries()) {
    const latest = latestPerKey.get(revisionKeys[i]!);
    // Two revisions of one fact collapse to the latest, unless they are linked as an
    // unresolved conflict: formation refused to pick one, so retrieval must not either.
    const olderRevision = b.predicateKey !== "" && latest !== b && !partners.get(b.beliefId)?.has(latest!.beliefId);
    if (replaced.has(b.beliefId) || olderRevision) {
      removed.set(b.beliefId, "superseded");
      continue;
    }
    const normalised = normalisedOf(b);
    if (statements.has(normalised)) {
      removed.set(b.beliefId, "restatement");
      continue;
    }
    const subject = lowerSubjectOf(b);
    const count = perSubject.get(subject) ?? 0;
    const isPartner = (partners.get(b.beliefId)?.size ?? 0) > 0;
    if (count >= perSubjectCap && !isPartner) {
      removed.set(b.beliefId, "subject_cap");
      continue;
    }
    statements.add(normalised);
    perSubject.set(subject, count + 1);
    kept.push(b);
  }

  const keptIds = new Set(kept.map((b) => b.beliefId));
  const conflicts = new Map<string, string[]>();
  for (const b of kept) {
    const list = [...(partners.get(b.beliefId) ?? [])].filter((id) => keptIds.has(id)).sort();
    if (list.length > 0) conflicts.set(b.beliefId, list);
  }
  return { kept, conflicts, removed };
}

function partnersOf(map: Map<string, Set<string>>, id: string): Set<string> {
  let set = map.get(id);
  if (!set) {
    set = new Set();
    map.set(id, set);
  }
  return set;
}

const normalise = (statement: string) => statement.trim().replace(/\s+/g, " ").toLowerCase();

/** The candidate's statement normalised: kept with its row when its source keeps a memo (ports/row-memo.ts). */
function normalisedOf(b: Collapsible): string {
  return b.memo ? (b.memo.normalisedStatement ??= normalise(b.statement)) : NORMALISED.of(b.statement, normalise);
}

/**
 * Recall after recall normalises the same statements (an index hands out the
 * same strings): about a third of collapse's time on a snapshot of 240
 * candidates was the regular expression and the new strings it made. Bounded
 * as the content words are (recall/rank/rank.ts), for the same large principals.
 */
const NORMALISED = new StringMemo<string>(131_072);

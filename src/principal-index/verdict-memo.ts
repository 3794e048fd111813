import type { EligibilityFilter } from "../domain/hard-filter.js";
import type { BeliefColumns } from "./columns.js";

/** A belief's hard-filter verdict: eligible, not eligible, or eligible only when its subject is named. */
export const ELIGIBLE = 1;
export const INELIGIBLE = 2;
export const IF_NAMED = 3;
export type Verdict = typeof ELIGIBLE | typeof INELIGIBLE | typeof IF_NAMED;

/**
 * Live hard-filter verdicts remembered between recalls. A live recall judges
 * every belief at one instant t (as_of = known_at = now), and a belief's
 * verdict changes only when t crosses one of its times (valid from/to,
 * recorded, retracted, expires) or when the belief or the persona set
 * changes. So each filter's verdicts are kept, by ordinal, until the
 * earliest such time among them; a write forgets its beliefs' verdicts
 * (forget), a persona change all of them (clear). Named subjects are not
 * part of a filter here: their one effect, the local-portability exception,
 * is the IF_NAMED verdict, settled per recall. A belief that may be
 * superseded is judged every time (its successors' times count too), and a
 * historical filter is never remembered.
 */
export class VerdictMemo {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxFilters = 32) {}

  /** The verdicts of `f`, for ordinals below `size`; null when `f` is not a live filter. */
  forFilter(f: EligibilityFilter, size: number): FilterVerdicts | null {
    const t = f.asOf.getTime();
    if (f.historical || t !== f.knownAt.getTime()) return null;
    const key = [f.sensitivityCeiling, f.statuses.join(","), f.currentScope, f.beliefTypes.join(","), f.excludePersonaHeld, f.excludeExpiredDated].join("\u0000");
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= this.maxFilters) this.entries.clear();
      this.entries.set(key, (entry = new Entry()));
    }
    // Verdicts hold from the latest instant one was stored at until the earliest time that changes one.
    if (t >= entry.until || t < entry.from) entry.reset(t);
    entry.ensure(size);
    return { verdicts: entry.verdicts, remember: (o, v, c) => entry.remember(o, v, c, t, f.excludeExpiredDated) };
  }

  /** Beliefs that changed: their verdicts are judged again. */
  forget(ords: readonly number[]): void {
    for (const entry of this.entries.values()) for (const o of ords) if (o < entry.verdicts.length) entry.verdicts[o] = 0;
  }

  clear(): void {
    this.entries.clear();
  }
}

export interface FilterVerdicts {
  /** By ordinal; 0 is not judged yet. */
  verdicts: Uint8Array;
  remember(ord: number, verdict: Verdict, c: BeliefColumns): void;
}

class Entry {
  verdicts = new Uint8Array(0);
  from = -Infinity;
  until = Infinity;

  reset(t: number): void {
    this.verdicts.fill(0);
    this.from = t;
    this.until = Infinity;
  }

  ensure(size: number): void {
    if (size <= this.verdicts.length) return;
    const grown = new Uint8Array(Math.max(size, this.verdicts.length * 2, 1024));
    grown.set(this.verdicts);
    this.verdicts = grown;
  }

  remember(o: number, v: Verdict, c: BeliefColumns, t: number, expiresCount: boolean): void {
    if (c.mayBeSuperseded[o] === 1) return;
    this.verdicts[o] = v;
    this.from = Math.max(this.from, t);
    const times = [c.validFrom[o]!, c.validTo[o]!, c.recordedAt[o]!, c.retractedAt[o]!, expiresCount ? c.expiresHint[o]! : Infinity];
    for (const time of times) if (time > t && time < this.until) this.until = time;
  }
}

import type { StoredBelief } from "../../domain/model.js";
import type { ArmCandidate } from "../../ports/candidate-source.js";

/** A recall arm: produces candidates in its own rank order, best first. */
export interface RecallArm {
  readonly name: string;
  run(signal: AbortSignal): Promise<ArmCandidate[]>;
}

/** What the pipeline streams when an arm finishes (or is abandoned at the deadline). */
export interface ArmOutcome {
  arm: string;
  candidates: { belief: StoredBelief; armScore: number }[];
  latencyMs: number;
  degraded: boolean;
}

/**
 * Watches the arms of every recall without the pipeline knowing what for:
 * metrics count outcomes, tracing wraps each run in a span. `moment` is the
 * recall's kind (snapshot, in_turn, child_run, search).
 */
export interface ArmObserver {
  wrap(arm: RecallArm, moment: string): RecallArm;
  outcome(outcome: ArmOutcome, moment: string): void;
}

/** Several observers as one, each seeing every arm (the first wraps innermost). */
export function allObservers(observers: readonly ArmObserver[]): ArmObserver {
  return {
    wrap: (arm, moment) => observers.reduce((wrapped, o) => o.wrap(wrapped, moment), arm),
    outcome: (outcome, moment) => {
      for (const o of observers) o.outcome(outcome, moment);
    },
  };
}

import type { StoredBelief } from "../../domain/model.js";
import type { ArmCandidate } from "../candidate-source.js";

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

import { Counter, Histogram, type Registry } from "prom-client";
import type { ArmObserver, ArmOutcome, RecallArm } from "../recall/arms/arm.js";

/**
 * Per-arm latency and degradation, by arm and moment: where a recall's time
 * goes, and which arm is being abandoned at the deadline or failing.
 */
export function armMetrics(registry: Registry): ArmObserver {
  const latency = new Histogram({
    name: "recall_arm_duration_seconds",
    help: "Time from a recall's start to each arm's outcome (finished, failed or abandoned at the deadline).",
    labelNames: ["arm", "moment"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const degraded = new Counter({
    name: "recall_arm_degraded_total",
    help: "Arm runs that failed or were abandoned at the deadline (named in arms_degraded).",
    labelNames: ["arm", "moment"],
    registers: [registry],
  });
  return {
    wrap: (arm: RecallArm) => arm,
    outcome(outcome: ArmOutcome, moment: string) {
      latency.observe({ arm: outcome.arm, moment }, outcome.latencyMs / 1000);
      if (outcome.degraded) degraded.inc({ arm: outcome.arm, moment });
    },
  };
}

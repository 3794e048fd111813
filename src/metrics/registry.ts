import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The sidecar's one Prometheus registry, made at composition (src/sidecar/start-sidecar.ts)
 * and passed to each component that has numbers to show: a component
 * registers its own collectors on it (see the other modules here), so
 * nothing reaches into another part to read its state. Default process and
 * Node metrics (CPU, memory, event-loop lag, GC, handles) are included.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export type { Registry };

// gRPC health checking (grpc.health.v1) for connect-node.
// Spec: https://github.com/grpc/grpc/blob/master/doc/health-checking.md

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "../gen/grpc/health/v1/health_pb.js";

/** Called with the name of the service whose status changed. */
type ChangeListener = (service: string) => void;

/**
 * Serving status per service name; "" stands for the whole server.
 * Mirrors grpc-go's health.Server: after shutdown() every status is
 * NOT_SERVING and later changes are ignored.
 */
export class HealthStatus {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly closed = new AbortController();

  constructor(services: Iterable<string> = []) {
    // Nothing is ready until the app says so.
    this.statuses.set("", ServingStatus.NOT_SERVING);
    for (const name of services) this.statuses.set(name, ServingStatus.NOT_SERVING);
  }

  /** Aborted once shutdown() has been called; open Watch calls end on it. */
  get shutdownSignal(): AbortSignal {
    return this.closed.signal;
  }

  /** Number of change listeners, i.e. open Watch calls. */
  get listenerCount(): number {
    return this.listeners.size;
  }

  set(service: string, status: ServingStatus): void {
    if (this.closed.signal.aborted) return;
    this.update(service, status);
  }

  /** Sets "" and every registered service name. */
  setAll(status: ServingStatus): void {
    if (this.closed.signal.aborted) return;
    for (const name of this.statuses.keys()) this.update(name, status);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Subscribes to status changes; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Marks everything NOT_SERVING, freezes the statuses and ends every open
   * Watch stream, so watchers don't hold up a graceful server shutdown.
   */
  shutdown(): void {
    if (this.closed.signal.aborted) return;
    for (const name of this.statuses.keys()) this.update(name, ServingStatus.NOT_SERVING);
    this.closed.abort();
  }

  private update(service: string, status: ServingStatus): void {
    if (this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    // Copy: a listener may unsubscribe while we iterate.
    for (const listener of [...this.listeners]) listener(service);
  }
}

export function registerHealth(router: ConnectRouter, health: HealthStatus): void {
  router.service(Health, {
    check(req) {
      const status = health.get(req.service);
      if (status === undefined) {
        throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      }
      return { status };
    },
    watch: (req, ctx) => watch(health, req, ctx),
  });
}

/**
 * Sends the current status, then every change, until the client goes away
 * or the server shuts down. Statuses are read fresh on each wake-up, so a
 * slow client gets the latest state rather than a backlog (as grpc-go does).
 */
async function* watch(
  health: HealthStatus,
  req: HealthCheckRequest,
  ctx: HandlerContext,
): AsyncGenerator<HealthCheckResponse> {
  const current = () => health.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;

  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  const unsubscribe = health.onChange((service) => {
    if (service === req.service) poke();
  });
  ctx.signal.addEventListener("abort", poke);
  health.shutdownSignal.addEventListener("abort", poke);

  try {
    let sent = current();
    yield create(HealthCheckResponseSchema, { status: sent });
    for (;;) {
      if (ctx.signal.aborted) return;
      const status = current();
      if (status !== sent) {
        sent = status;
        yield create(HealthCheckResponseSchema, { status });
        continue;
      }
      // Checked after sending, so watchers still see the final NOT_SERVING.
      if (health.shutdownSignal.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener("abort", poke);
    health.shutdownSignal.removeEventListener("abort", poke);
  }
}

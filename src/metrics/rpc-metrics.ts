import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Gauge, Histogram, type Registry } from "prom-client";
import { whenCallEnds } from "../server/call-end.js";
import type { UnaryStatusObserver } from "../server/wire/decode-errors.js";
import { reachedInterceptors } from "../server/request-log.js";
import { statusName } from "../server/grpc-status.js";

/**
 * Per-RPC server metrics under OpenTelemetry's RPC semantic conventions
 * (rpc.server.call.duration in seconds, with rpc.system.name, rpc.method and
 * rpc.response.status_code), as Prometheus names them:
 *   rpc_server_call_duration_seconds{rpc_system_name, rpc_method, rpc_response_status_code}
 * whose _count is the request count by method and status; and the calls in
 * flight. A streaming call lasts until its last message (whenCallEnds).
 *
 * Sits outside the request-log interceptor, which maps domain errors to
 * ConnectErrors, so every status seen here is the one the caller got.
 */

/** Buckets in seconds: 1 ms to 30 s (the longest deadline). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const DURATION_NAME = "rpc_server_call_duration_seconds";

/**
 * Counts the unary calls refused before any interceptor ran (a request that
 * does not decode or does not fit the byte budget), under the status their
 * caller got: with the interceptor, every call is counted once.
 */
export function unreadCallMetrics(registry: Registry): UnaryStatusObserver {
  return (req, method, code) => {
    if (reachedInterceptors(req.contextValues)) return;
    const duration = registry.getSingleMetric(DURATION_NAME) as Histogram | undefined;
    duration?.observe({ rpc_system_name: "grpc", rpc_method: method, rpc_response_status_code: statusName(code === 0 ? undefined : (code as Code)) }, 0);
  };
}

export function rpcMetricsInterceptor(registry: Registry): Interceptor {
  const duration = new Histogram({
    name: DURATION_NAME,
    help: "Duration of inbound RPCs, to the last response message.",
    labelNames: ["rpc_system_name", "rpc_method", "rpc_response_status_code"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const active = new Gauge({
    name: "recall_rpc_server_active_calls",
    help: "Inbound RPCs in flight.",
    labelNames: ["rpc_method"],
    registers: [registry],
  });

  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    const end = duration.startTimer({ rpc_system_name: "grpc", rpc_method: method });
    active.inc({ rpc_method: method });
    const finish = (error: unknown) => {
      const status = error === undefined ? "OK" : statusName(ConnectError.from(error).code);
      end({ rpc_response_status_code: status });
      active.dec({ rpc_method: method });
    };
    return whenCallEnds(() => next(req), finish);
  };
}

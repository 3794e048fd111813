import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { RETRIEVAL_POLICY } from "../recall/policy.js";
import { deadlineMarginMs } from "../recall/pipeline.js";

const storeDeadlineKey = createContextKey<number | undefined>(undefined, { description: "store deadline (epoch ms)" });

/**
 * Computes every RPC's store deadline (store/store-deadline.ts) from the
 * call's deadline (the same default and maximum as the handlers use), for
 * the handlers to bound their store calls with (`storeDeadlineOf`). The
 * store must answer a whole margin before the client's deadline (half a
 * margin left too little time for the answer on a loaded machine), so that
 * a store that cannot be reached is reported as UNAVAILABLE (with whether
 * anything was written) rather than the client's own DEADLINE_EXCEEDED,
 * which says nothing.
 */
export function storeDeadlineInterceptor(deadline: { defaultMs: number; maxMs: number }): Interceptor {
  return (next) => (req) => {
    const allowed = Math.min(Math.max(0, requestedTimeoutMs(req.header) ?? deadline.defaultMs), deadline.maxMs);
    req.contextValues.set(storeDeadlineKey, Date.now() + allowed - deadlineMarginMs(allowed, RETRIEVAL_POLICY));
    return next(req);
  };
}

/** The call's store deadline; undefined (unbounded) for a call the interceptor did not see. */
export function storeDeadlineOf(ctx: Pick<HandlerContext, "values">): number | undefined {
  return ctx.values.get(storeDeadlineKey);
}

const GRPC_TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** The client's timeout: `grpc-timeout` (gRPC, gRPC-Web) or `connect-timeout-ms` (Connect). */
function requestedTimeoutMs(header: Headers): number | undefined {
  const grpc = header.get("grpc-timeout");
  const match = grpc === null ? null : /^(\d{1,8})([HMSmun])$/.exec(grpc);
  if (match) return Number(match[1]) * GRPC_TIMEOUT_UNIT_MS[match[2]!]!;
  const connect = header.get("connect-timeout-ms");
  if (connect !== null && /^\d{1,10}$/.test(connect)) return Number(connect);
  return undefined;
}

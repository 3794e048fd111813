import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Tracer } from "@opentelemetry/api";
import { whenCallEnds } from "../server/call-end.js";
import { callLogLevel, statusName } from "../server/grpc-status.js";

/**
 * A server span per RPC, named by its method, parented on the caller's W3C
 * `traceparent` when it sent one, with the RPC semantic-convention
 * attributes. The handler runs inside the span's context, so the arm and
 * trace-write spans below it become its children; for a stream, every step
 * of the handler's iteration is bound to that context too (connect iterates
 * it from outside).
 */
export function rpcSpanInterceptor(tracer: Tracer): Interceptor {
  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    const parent = propagation.extract(context.active(), req.header, {
      keys: (h) => [...h.keys()],
      get: (h, key) => h.get(key) ?? undefined,
    });
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { "rpc.system.name": "grpc", "rpc.method": method } }, parent);
    const ctx = trace.setSpan(parent, span);
    const ended = (error: unknown) => {
      const code = error === undefined ? undefined : ConnectError.from(error).code;
      span.setAttribute("rpc.response.status_code", statusName(code));
      if (callLogLevel(code) !== "info") span.setStatus({ code: SpanStatusCode.ERROR, message: statusName(code) });
      span.end();
    };
    return whenCallEnds(async () => {
      const res = await context.with(ctx, () => next(req));
      return res.stream ? { ...res, message: bound(res.message, ctx) } : res;
    }, ended);
  };
}

/** The same iterable, each step run in `ctx`. */
function bound<T>(iterable: AsyncIterable<T>, ctx: Context): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = iterable[Symbol.asyncIterator]();
      return {
        next: () => context.with(ctx, () => it.next()),
        return: (value?: unknown) => context.with(ctx, () => it.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined })),
        throw: (error?: unknown) => context.with(ctx, () => it.throw?.(error) ?? Promise.reject(error)),
      };
    },
  };
}

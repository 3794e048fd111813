import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Tracer } from "@opentelemetry/api";
import { whenCallEnds } from "../server/call-end.js";
import { callLogLevel, statusName } from "../server/grpc-status.js";
import { callerOf } from "../server/identity/identity.js";
import { callNotesOf } from "../server/request-log.js";
import { memoryEndAttributes, memoryMethod, memoryQueryAttributes, memoryStartAttributes } from "./memory-spans.js";

/**
 * A server span per RPC, named by its method, parented on the caller's W3C
 * `traceparent` when it sent one, with the RPC semantic-convention
 * attributes. The handler runs inside the span's context, so the arm and
 * trace-write spans below it become its children; for a stream, every step
 * of the handler's iteration is bound to that context too (connect iterates
 * it from outside). The read RPCs also carry the GenAI memory attributes
 * (memory-spans.ts); the query text only with `captureQuery`.
 */
export function rpcSpanInterceptor(tracer: Tracer, options: { captureQuery: boolean } = { captureQuery: false }): Interceptor {
  return (next) => async (request) => {
    const method = `${request.service.typeName}/${request.method.name}`;
    const memory = memoryMethod(request.service.typeName, request.method.name);
    const parent = propagation.extract(context.active(), request.header, {
      keys: (h) => [...h.keys()],
      get: (h, key) => h.get(key) ?? undefined,
    });
    const attributes = { "rpc.system.name": "grpc", "rpc.method": method, ...(memory ? memoryStartAttributes() : {}) };
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
    const ctx = trace.setSpan(parent, span);
    const ended = (error: unknown) => {
      const code = error === undefined ? undefined : ConnectError.from(error).code;
      span.setAttribute("rpc.response.status_code", statusName(code));
      if (memory) {
        const end = { caller: callerOf(request.contextValues), records: callNotesOf(request.contextValues)?.records, status: code === undefined ? undefined : statusName(code) };
        span.setAttributes(memoryEndAttributes(end));
      }
      if (callLogLevel(code) !== "info") span.setStatus({ code: SpanStatusCode.ERROR, message: statusName(code) });
      span.end();
    };
    // The query text is read from the request on its way through (a stream's one message as it passes).
    const onRequest = (message: unknown) => memory && span.setAttributes(memoryQueryAttributes(memory, message, options.captureQuery));
    const req = !memory || !options.captureQuery ? request : request.stream ? { ...request, message: tapped(request.message, onRequest) } : (onRequest(request.message), request);
    return whenCallEnds(async () => {
      const res = await context.with(ctx, () => next(req));
      return res.stream ? { ...res, message: bound(res.message, ctx) } : res;
    }, ended);
  };
}

/** The same iterable, each message shown to `see` as it passes. */
function tapped<T>(iterable: AsyncIterable<T>, see: (message: T) => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = iterable[Symbol.asyncIterator]();
      return {
        next: async () => {
          const step = await it.next();
          if (!step.done) see(step.value);
          return step;
        },
        return: (value?: unknown) => it.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
        throw: (error?: unknown) => it.throw?.(error) ?? Promise.reject(error),
      };
    },
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

import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import { toConnectError } from "./errors.js";

/**
 * One log line per call: method, status, duration and the recall trace id
 * when there is one. Never belief text at info level. Also the single place
 * where domain errors are mapped to gRPC statuses, for unary and streaming
 * calls alike.
 */

interface CallNotes {
  traceId?: string;
}

const notesKey = createContextKey<CallNotes | undefined>(undefined, { description: "per-call log notes" });

/** Lets a handler attach the trace id to its call's log line. */
export function noteTraceId(ctx: HandlerContext, traceId: string): void {
  const notes = ctx.values.get(notesKey);
  if (notes) notes.traceId = traceId;
}

export function requestLogInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const notes: CallNotes = {};
    req.contextValues.set(notesKey, notes);
    const method = `${req.service.typeName}/${req.method.name}`;
    const finish = (error: unknown) => {
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const code = error === undefined ? "ok" : Code[toConnectError(error).code];
      const fields = { method, code, durationMs, traceId: notes.traceId };
      if (error === undefined) logger.info(fields, "call");
      else if (error instanceof ConnectError || toConnectError(error).code !== Code.Internal) logger.info(fields, "call");
      else logger.error({ ...fields, err: error }, "call failed");
    };
    try {
      const res = await next(req);
      if (!res.stream) {
        finish(undefined);
        return res;
      }
      const messages = res.message;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* messages;
            finish(undefined);
          } catch (error) {
            finish(error);
            throw toConnectError(error);
          }
        })(),
      };
    } catch (error) {
      finish(error);
      throw toConnectError(error);
    }
  };
}

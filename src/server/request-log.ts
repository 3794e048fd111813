import { Code, ConnectError, createContextKey, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { CALL_LINE, NO_MEMORY_LINE, type Logger } from "../log/logger.js";
import { whenCallEnds } from "./call-end.js";
import type { UnaryStatusObserver } from "./wire/decode-errors.js";
import { toConnectError } from "./errors.js";
import { callLogLevel, statusName } from "./grpc-status.js";
import { callerOf } from "./identity/identity.js";

/**
 * One log line per call: method, canonical status (OK, INVALID_ARGUMENT, …),
 * duration, the recall trace id when there is one, tenant and principal.
 * Server-side failures at warn or error, what the caller got wrong at info.
 * Never belief text at info level. Also the single place where domain errors
 * are mapped to gRPC statuses, for unary and streaming calls alike.
 */

interface CallNotes {
  traceId?: string;
  /** Beliefs or episodes the call returned (for the span's gen_ai.memory.record.count). */
  records?: number;
  /** The recall's principal holds no memory at all (RecallResult.no_memory). */
  noMemory?: boolean;
}

const notesKey = createContextKey<CallNotes | undefined>(undefined, { description: "per-call log notes" });

/** Lets a handler attach the trace id to its call's log line. */
export function noteTraceId(ctx: HandlerContext, traceId: string): void {
  const notes = ctx.values.get(notesKey);
  if (notes) notes.traceId = traceId;
}

/** Lets a recall handler say that its principal holds no memory at all: the call gets one more line, at info. */
export function noteNoMemory(ctx: HandlerContext): void {
  const notes = ctx.values.get(notesKey);
  if (notes) notes.noMemory = true;
}

/** Lets a read handler say how many records it returned (a binary reply's items may be pre-encoded, not countable). */
export function noteRecordCount(ctx: HandlerContext, records: number): void {
  const notes = ctx.values.get(notesKey);
  if (notes) notes.records = records;
}

/** What the call's handler noted, for the interceptors outside this one (the span's); undefined before this one ran. */
export function callNotesOf(values: ContextValues): Readonly<CallNotes> | undefined {
  return values.get(notesKey);
}

/**
 * The log line of a unary call refused before any interceptor ran: its
 * request did not decode, had a bad message flag, or did not fit the request
 * byte budget. Same line, same status as if the interceptor had seen it.
 */
export function unreadCallLog(logger: Logger): UnaryStatusObserver {
  return (req, method, code) => {
    if (reachedInterceptors(req.contextValues)) return;
    const fields = { method, code: statusName(code === 0 ? undefined : (code as Code)), durationMs: 0, refusedUnread: true };
    const level = callLogLevel(code === 0 ? undefined : (code as Code));
    if (level === "info") logger.info(fields, CALL_LINE);
    else logger[level](fields, "call failed");
  };
}

/** Whether the request-log interceptor saw this call (it leaves its notes in the call's context values). */
export function reachedInterceptors(values: ContextValues | undefined): boolean {
  return values?.get(notesKey) !== undefined;
}

export function requestLogInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const notes: CallNotes = {};
    req.contextValues.set(notesKey, notes);
    const method = `${req.service.typeName}/${req.method.name}`;
    const finish = (error: unknown) => {
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const code = error === undefined ? undefined : toConnectError(error).code;
      const caller = callerOf(req.contextValues);
      const fields = { method, code: statusName(code), durationMs, traceId: notes.traceId, tenant: caller?.tenantId, principal: caller?.principalId };
      const level = callLogLevel(code);
      if (level === "info") logger.info(fields, CALL_LINE);
      // The unmapped error (SQL, stack) stays in the log; the caller only ever sees the generic status.
      else logger[level]({ ...fields, err: error instanceof ConnectError ? error.message : error }, "call failed");
      // An empty block from a principal never written is most often a caller sending the wrong ids.
      if (code === undefined && notes.noMemory) logger.info({ method, traceId: notes.traceId, tenant: caller?.tenantId, principal: caller?.principalId }, NO_MEMORY_LINE);
    };
    return whenCallEnds(() => next(req), finish, toConnectError);
  };
}

import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  MemoryService,
  SessionType,
  type ArmResult,
  type RecallEpisodesRequestSchema,
  type RecallEpisodesResponse,
  type RecallRequestSchema,
  type SearchRequestSchema,
  type SearchResponse,
  type WorkingState,
} from "../gen/memory/v1/memory_service_pb.js";
import { Moment, type BeliefSchema, type RecallResult, type SurfaceSchema } from "../gen/memory/v1/types_pb.js";
import { InspectService } from "../gen/memory/v1/inspect_service_pb.js";
import { MemoryWriteService, RejectionKind } from "../gen/memory/v1/write_service_pb.js";
import { RecallError } from "./errors.js";
import { DEFAULT_RETRY, withDeadline, type RetryPolicy } from "./retry.js";
import type { BeliefInput, BeliefJson } from "./write-input.js";
import { encodableCorrection, encodableWrites, writeHelpers, type WriteHelpers } from "./writes.js";

/**
 * The call flow of an agent runtime, on top of the generated connect-es
 * client: open a session (the snapshot for the cached prefix, and its
 * watermark), recall for each turn with that watermark, cite what the model
 * used, reject what the user says is wrong. Every call has a deadline; calls
 * are retried on UNAVAILABLE only (each is a read or idempotent by id).
 */

type Init<T> = Omit<T, "$typeName" | "$unknown">;

export interface RecallClientOptions {
  /** The sidecar: "127.0.0.1:50051" or "http://127.0.0.1:50051" (plaintext HTTP/2, gRPC protocol). */
  address: string;
  /** Sent as x-tenant-id on every call. */
  tenantId: string;
  /** Sent as x-principal-id on every call. */
  principalId: string;
  /**
   * The project (or other relevance scope) this application works in: where
   * the beliefs it remembers are learned (origin_scope) and its episodes'
   * project, unless a call names its own.
   */
  scope?: string;
  /** Deadline of a call that names none (default 2000 ms, the sidecar's own default). */
  deadlineMs?: number;
  /** Retries on UNAVAILABLE (default: 3 attempts, 50 ms backoff doubling). */
  retry?: Partial<RetryPolicy>;
  /** A transport of your own (TLS, a Unix socket, interceptors); `address` is then ignored. */
  transport?: Transport;
}

/** What every call may set. */
export interface CallOptions {
  /** This call's deadline, retries included. */
  deadlineMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
}

export interface OpenSessionOptions extends CallOptions {
  /** The conversation's id; generated when omitted. */
  sessionId?: string;
  /** interactive (default), async or child: sets the snapshot's caps. */
  sessionType?: "interactive" | "async" | "child";
  /** The model's context window: the snapshot never takes more than 2% of it. */
  contextWindowTokens?: number;
  /** The project the session runs in (RecallQuery.current_scope). */
  scope?: string;
  /** The opening goal: fills the snapshot's priming slots. */
  goal?: string;
  surface?: Init<MessageInitShape<typeof SurfaceSchema>>;
}

/** A session's state for in-turn recalls: its id, project and snapshot watermark. */
export interface SessionRef {
  readonly sessionId: string;
  readonly scope: string;
  /** The snapshot's store position: beliefs written after it are the recall delta. */
  readonly watermark: bigint;
}

export interface Session extends SessionRef {
  /** The session-open snapshot: put `snapshot.rendered` in the cached system prefix, once. */
  readonly snapshot: RecallResult;
  /** recallForTurn with this session's watermark. */
  recallForTurn(turn: TurnOptions): Promise<TurnRecall>;
}

export interface TurnOptions extends CallOptions {
  turnId: string;
  /** The turn's question or objective (RecallQuery.text). */
  text?: string;
  /** Entities in play: they anchor the structured arm. */
  subjects?: string[];
  /** What the agent is working on; joined to the query by the sidecar's query former. */
  workingState?: Init<Partial<WorkingState>>;
  surface?: Init<MessageInitShape<typeof SurfaceSchema>>;
  /** Called with each arm's result as it finishes (progress and tracing; optional). */
  onArm?: (arm: ArmResult) => void;
}

/** An in-turn recall's outcome. */
export interface TurnRecall {
  /** The full result: items, rendered (corrections first), trace id, escalation advice. */
  readonly result: RecallResult;
  /** Put this in the user turn; it may be only corrections, or empty. */
  readonly rendered: string;
  readonly traceId: string;
  /**
   * True when arms still running near the deadline were abandoned and the
   * result was ranked from those that finished: a partial answer, not an error.
   */
  readonly degraded: boolean;
  /** The abandoned or failed arms. */
  readonly armsDegraded: readonly string[];
}

export type RejectionKindName = "unspecified" | "not_true" | "changed" | "not_here";

export interface RejectOptions extends CallOptions {
  beliefId: string;
  kind: RejectionKindName;
  /** Required for "changed": the belief that replaces it (any shape the write helpers take; no defaults are added). */
  correction?: Init<MessageInitShape<typeof BeliefSchema>> | BeliefInput | BeliefJson;
  /** Required for "not_here": the project where it does not hold. */
  scope?: string;
  reason?: string;
  /** Makes a repeat a no-op; generated when omitted (and kept across this call's retries). */
  rejectionId?: string;
}

export interface RecallClient extends WriteHelpers {
  /** Opens a session: one snapshot recall, returned with the session handle that carries its watermark. */
  openSession(options?: OpenSessionOptions): Promise<Session>;
  /** An in-turn recall for the session: the stream is consumed, arm events go to `onArm`. */
  recallForTurn(session: SessionRef, turn: TurnOptions): Promise<TurnRecall>;
  /** The agent's memory.search tool. */
  search(text: string, options?: CallOptions & Init<MessageInitShape<typeof SearchRequestSchema>>): Promise<SearchResponse>;
  /** The agent's memory.recall_episodes tool: a session and/or time range, a page at a time. */
  recallEpisodes(request: Init<MessageInitShape<typeof RecallEpisodesRequestSchema>>, options?: CallOptions): Promise<RecallEpisodesResponse>;
  /** Records the beliefs the model cited from a recall's block; `turnId` when citing from a snapshot. */
  cite(traceId: string, beliefIds: readonly string[], options?: CallOptions & { turnId?: string }): Promise<{ recorded: number }>;
  /** The user says a belief is wrong. */
  reject(options: RejectOptions): Promise<{ rejectionId: string; storePosition: bigint }>;
  /** Erases everything stored for this client's principal (ErasePrincipal). */
  erase(options?: CallOptions): Promise<{ deleted: Record<string, number>; storePosition: bigint }>;
  /** The generated connect-es clients, with this client's identity, for every other RPC. */
  readonly raw: { memory: Client<typeof MemoryService>; write: Client<typeof MemoryWriteService>; inspect: Client<typeof InspectService> };
  /** Closes the HTTP/2 connection (when the client made its own transport). */
  close(): void;
}

const SESSION_TYPES = { interactive: SessionType.INTERACTIVE, async: SessionType.ASYNC, child: SessionType.CHILD } as const;
const REJECTION_KINDS = {
  unspecified: RejectionKind.UNSPECIFIED,
  not_true: RejectionKind.NOT_TRUE,
  changed: RejectionKind.CHANGED,
  not_here: RejectionKind.NOT_HERE,
} as const;

/** A client for one principal of one sidecar. */
export function createRecallClient(options: RecallClientOptions): RecallClient {
  const baseUrl = /^https?:\/\//.test(options.address) ? options.address : `http://${options.address}`;
  const sessions = options.transport ? undefined : new Http2SessionManager(baseUrl);
  const transport = options.transport ?? createGrpcTransport({ baseUrl, sessionManager: sessions! });
  const headers = { "x-tenant-id": options.tenantId, "x-principal-id": options.principalId };
  const memory = createClient(MemoryService, transport);
  const write = createClient(MemoryWriteService, transport);
  const inspect = createClient(InspectService, transport);
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const defaultDeadlineMs = options.deadlineMs ?? 2000;

  /** A unary call under the deadline, retried when safe. */
  const call = <T>(method: string, o: CallOptions | undefined, send: (opts: { timeoutMs: number; headers: typeof headers; signal?: AbortSignal }) => Promise<T>) =>
    withDeadline(method, o?.deadlineMs ?? defaultDeadlineMs, policy, (timeoutMs) =>
      send({ timeoutMs, headers, ...(o?.signal ? { signal: o.signal } : {}) }),
    );

  /** A Recall stream, consumed to its one result; retried only before any event arrived. */
  const recall = async (request: MessageInitShape<typeof RecallRequestSchema>, o: CallOptions & { onArm?: (arm: ArmResult) => void }) => {
    let started = false;
    return withDeadline(
      "MemoryService.Recall",
      o.deadlineMs ?? defaultDeadlineMs,
      policy,
      async (timeoutMs) => {
        let result: RecallResult | undefined;
        for await (const event of memory.recall(request, { timeoutMs, headers, ...(o.signal ? { signal: o.signal } : {}) })) {
          started = true;
          if (event.event.case === "arm") o.onArm?.(event.event.value);
          else if (event.event.case === "result") result = event.event.value;
        }
        if (!result) throw new RecallError(Code.Internal, "MemoryService.Recall", "the stream ended without a result");
        return result;
      },
      () => !started,
    );
  };

  const recallForTurn = async (session: SessionRef, turn: TurnOptions): Promise<TurnRecall> => {
    const result = await recall(
      {
        moment: Moment.IN_TURN,
        sessionId: session.sessionId,
        turnId: turn.turnId,
        snapshotWatermark: session.watermark,
        query: { currentScope: session.scope, ...(turn.text !== undefined ? { text: turn.text } : {}), subjects: turn.subjects ?? [] },
        ...(turn.workingState ? { workingState: turn.workingState } : {}),
        ...(turn.surface ? { surface: turn.surface } : {}),
      },
      turn,
    );
    return { result, rendered: result.rendered, traceId: result.traceId, degraded: result.armsDegraded.length > 0, armsDegraded: result.armsDegraded };
  };

  return {
    ...writeHelpers({ write, inspect, scope: options.scope ?? "", call }),
    async openSession(o = {}) {
      const sessionId = o.sessionId ?? randomUUID();
      const scope = o.scope ?? "";
      const snapshot = await recall(
        {
          moment: Moment.SNAPSHOT,
          sessionId,
          sessionType: SESSION_TYPES[o.sessionType ?? "interactive"],
          contextWindowTokens: o.contextWindowTokens ?? 0,
          query: { currentScope: scope, ...(o.goal !== undefined ? { text: o.goal } : {}) },
          ...(o.surface ? { surface: o.surface } : {}),
        },
        o,
      );
      const ref: SessionRef = { sessionId, scope, watermark: snapshot.snapshotWatermark };
      return { ...ref, snapshot, recallForTurn: (turn) => recallForTurn(ref, turn) };
    },
    recallForTurn,
    search(text, o = {}) {
      const { deadlineMs, signal, ...request } = o;
      return call("MemoryService.Search", { ...(deadlineMs ? { deadlineMs } : {}), ...(signal ? { signal } : {}) }, (opts) =>
        memory.search({ ...request, text }, opts),
      );
    },
    recallEpisodes(request, o) {
      return call("MemoryService.RecallEpisodes", o, (opts) => memory.recallEpisodes(request, opts));
    },
    async cite(traceId, beliefIds, o = {}) {
      const { recorded } = await call("MemoryWriteService.RecordCitations", o, (opts) =>
        write.recordCitations({ traceId, beliefIds: [...beliefIds], turnId: o.turnId ?? "" }, opts),
      );
      return { recorded };
    },
    async reject(o) {
      const rejectionId = o.rejectionId ?? randomUUID();
      const { storePosition } = await call("MemoryWriteService.RejectBelief", o, (opts) =>
        write.rejectBelief(
          {
            rejectionId,
            beliefId: o.beliefId,
            kind: REJECTION_KINDS[o.kind],
            scope: o.scope ?? "",
            reason: o.reason ?? "",
            ...(o.correction ? { correction: encodableCorrection(o.correction) } : {}),
          },
          opts,
        ),
      );
      return { rejectionId, storePosition };
    },
    async erase(o) {
      const { deleted, storePosition } = await call("MemoryWriteService.ErasePrincipal", o, (opts) =>
        write.erasePrincipal({ tenantId: options.tenantId, principalId: options.principalId }, opts),
      );
      return { deleted: { ...deleted }, storePosition };
    },
    raw: {
      memory: withIdentity(memory, headers),
      write: withIdentity(write, headers, encodableWrites),
      inspect: withIdentity(inspect, headers),
    },
    close() {
      sessions?.abort();
    },
  };
}

/**
 * The generated client with the identity headers added to every call's
 * options, each request first passed through `prepare[method]` when there is
 * one (a rejected call when it throws).
 */
function withIdentity<C extends object>(client: C, headers: Record<string, string>, prepare: Record<string, (request: unknown) => unknown> = {}): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      const method = Reflect.get(target, property, receiver) as unknown;
      if (typeof method !== "function") return method;
      const before = typeof property === "string" ? prepare[property] : undefined;
      return (request: unknown, opts: { headers?: Record<string, string> } = {}) => {
        const send = () =>
          (method as (r: unknown, o: unknown) => unknown).call(target, before ? before(request) : request, {
            ...opts,
            headers: { ...headers, ...opts.headers },
          });
        return before ? Promise.resolve().then(send) : send();
      };
    },
  });
}

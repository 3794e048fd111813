import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { SensitivityName } from "../config/config.js";
import { NotFoundError } from "../domain/errors.js";
import type { Principal, RecallTrace } from "../domain/model.js";
import {
  GetBeliefResponseSchema,
  GetPrincipalSummaryResponseSchema,
  InspectService,
  ListBeliefsResponseSchema,
  ListSessionsResponseSchema,
  ListTurnsResponseSchema,
  GetRenderedBlockResponseSchema,
} from "../gen/memory/v1/inspect_service_pb.js";
import { episodeToProto, reverse, SENSITIVITY_LEVEL } from "../server/wire/convert.js";
import { principalOf } from "../server/identity/identity.js";
import { storeDeadlineOf } from "../server/store-deadline-interceptor.js";
import type { MemoryStore } from "../store/memory-store.js";
import type { TraceWriter } from "../trace/trace-writer.js";
import { uuid } from "../server/wire/validate.js";
import { renderedBlock } from "./rendered-block.js";
import { explainedTrace } from "./explained-trace.js";
import { decodeCursor, encodeCursor, queryKey } from "./cursor-token.js";
import { inspectedBeliefsToProto, rejectionToProto, sessionToProto, turnToProto } from "./inspect-convert.js";
import * as validate from "./inspect-request.js";

const SENSITIVITY_PB = reverse(SENSITIVITY_LEVEL);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ANY_ID = /^[\s\S]{0,200}$/;

export interface InspectServiceDeps {
  store: MemoryStore;
  defaultSensitivityCeiling: SensitivityName;
  /** A trace still queued for writing is read from the queue, as GetTrace does. */
  traces?: Pick<TraceWriter, "pending">;
}

/**
 * InspectService: thin handlers over the store's inspection reads
 * (store/inspect-store.ts). The caller's principal comes from the identity
 * interceptor, as on every read; the viewing ceiling from the request.
 */
export function inspectService(deps: InspectServiceDeps): ServiceImpl<typeof InspectService> {
  const storeOf = (ctx: HandlerContext) => deps.store.at(storeDeadlineOf(ctx));
  // A trace still queued for writing is read from the queue; missing and not-yours are the same answer, as in GetTrace.
  const traceOf = async (store: MemoryStore, principal: Principal, traceId: string): Promise<RecallTrace> => {
    const trace = deps.traces?.pending?.(principal, traceId) ?? (await store.getTrace(principal, traceId));
    if (!trace) throw new NotFoundError("trace not found");
    return trace;
  };
  return {
    async getPrincipalSummary(req, ctx) {
      const principal = principalOf(ctx);
      const ceiling = validate.viewingCeiling(req, deps.defaultSensitivityCeiling);
      const store = storeOf(ctx);
      const summary = await store.inspect.summary(principal, ceiling);
      const head = await store.head(principal);
      return create(GetPrincipalSummaryResponseSchema, {
        tenantId: principal.tenantId,
        principalId: principal.principalId,
        beliefsByStatus: summary.beliefsByStatus,
        beliefsAboveCeiling: summary.beliefsAboveCeiling,
        sessions: summary.sessions,
        storePosition: BigInt(head.position),
        viewingCeiling: SENSITIVITY_PB.get(ceiling),
      });
    },

    async listBeliefs(req, ctx) {
      const { filter, pageSize } = validate.listBeliefsRequest(req, deps.defaultSensitivityCeiling);
      const key = queryKey(filter);
      const page = await storeOf(ctx).inspect.listBeliefs(principalOf(ctx), filter, decodeCursor(req.pageToken, key, UUID), pageSize);
      return create(ListBeliefsResponseSchema, {
        beliefs: await inspectedBeliefsToProto(page.beliefs),
        nextPageToken: page.next ? encodeCursor(page.next, key) : "",
        total: page.total,
      });
    },

    async getBelief(req, ctx) {
      const { beliefId, ceiling } = validate.getBeliefRequest(req, deps.defaultSensitivityCeiling);
      const detail = await storeOf(ctx).inspect.belief(principalOf(ctx), beliefId, ceiling);
      // Missing, another principal's and above the ceiling are the same answer.
      if (!detail) throw new NotFoundError("belief not found");
      const [belief, ...linked] = await inspectedBeliefsToProto([detail.belief, ...detail.predecessors, ...detail.successors, ...detail.conflicts]);
      const successorsAt = detail.predecessors.length;
      const conflictsAt = successorsAt + detail.successors.length;
      return create(GetBeliefResponseSchema, {
        belief,
        predecessors: linked.slice(0, successorsAt),
        successors: linked.slice(successorsAt, conflictsAt),
        conflicts: linked.slice(conflictsAt),
        linkedAboveCeiling: detail.linkedAboveCeiling,
        rejections: detail.rejections.map(rejectionToProto),
        sourceEpisodes: detail.sourceEpisodes.map(episodeToProto),
        citations: detail.citations,
      });
    },

    async listSessions(req, ctx) {
      const { pageSize } = validate.listSessionsRequest(req);
      const key = queryKey(["sessions"]);
      const page = await storeOf(ctx).inspect.sessions(principalOf(ctx), decodeCursor(req.pageToken, key, ANY_ID), pageSize);
      return create(ListSessionsResponseSchema, {
        sessions: page.sessions.map(sessionToProto),
        nextPageToken: page.next ? encodeCursor(page.next, key) : "",
      });
    },

    async listTurns(req, ctx) {
      const { sessionId, pageSize } = validate.listTurnsRequest(req);
      const key = queryKey(["turns", sessionId]);
      const page = await storeOf(ctx).inspect.turns(principalOf(ctx), sessionId, decodeCursor(req.pageToken, key, ANY_ID), pageSize);
      return create(ListTurnsResponseSchema, {
        turns: page.turns.map(turnToProto),
        nextPageToken: page.next ? encodeCursor(page.next, key) : "",
      });
    },

    async getRenderedBlock(req, ctx) {
      const principal = principalOf(ctx);
      const store = storeOf(ctx);
      const trace = await traceOf(store, principal, uuid(req.traceId, "trace_id"));
      return create(GetRenderedBlockResponseSchema, await renderedBlock(store, principal, trace));
    },

    async explainTrace(req, ctx) {
      const principal = principalOf(ctx);
      const traceId = uuid(req.traceId, "trace_id");
      const ceiling = validate.viewingCeiling(req, deps.defaultSensitivityCeiling);
      const store = storeOf(ctx);
      return explainedTrace(store.inspect, principal, await traceOf(store, principal, traceId), ceiling);
    },
  };
}

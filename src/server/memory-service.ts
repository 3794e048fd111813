import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { NotFoundError } from "../domain/errors.js";
import type { RecallContext } from "../domain/model.js";
import {
  ArmResultSchema,
  GetTraceResponseSchema,
  MemoryService,
  RecallEpisodesResponseSchema,
  RecallEventSchema,
  SearchResponseSchema,
} from "../gen/memory/v1/memory_service_pb.js";
import { EpisodeSchema } from "../gen/memory/v1/types_pb.js";
import type { ArmOutcome } from "../recall/arms/arm.js";
import { recall, type PipelineDeps, type RecallOutcome, type RecallRun } from "../recall/pipeline.js";
import { countTokens } from "../recall/tokens.js";
import type { SensitivityName } from "../config.js";
import { traceView } from "../trace/trace-view.js";
import {
  reverse,
  recallResultToProto,
  recallTraceToProto,
  recallTraceViewToProto,
  SENSITIVITY_LEVEL,
  toTimestamp,
} from "./convert.js";
import { decodePageToken, encodePageToken } from "./page-token.js";
import { assertSameIdentity, principalOf } from "./identity.js";
import { noteTraceId } from "./request-log.js";
import * as validate from "./validate.js";

export interface MemoryServiceDeps extends PipelineDeps {
  defaultSensitivityCeiling: SensitivityName;
  deadline: { defaultMs: number; maxMs: number };
}

/** Episode budgets: archival is the expensive tier and gets the smaller one. */
const EPISODE_BUDGET = { live: 4000, archival: 1500 };

const SENSITIVITY_PB = reverse(SENSITIVITY_LEVEL);

/** Thin handlers: validate, call the pipeline or store, convert. */
export function memoryService(deps: MemoryServiceDeps): ServiceImpl<typeof MemoryService> {
  const deadlineAt = (ctx: HandlerContext) => {
    const requested = ctx.timeoutMs() ?? deps.deadline.defaultMs;
    return Date.now() + Math.min(Math.max(0, requested), deps.deadline.maxMs);
  };
  const context = (
    req: { sessionId: string; runId: string; turnId: string },
    surface: RecallContext["surface"],
    moment: RecallContext["moment"],
    sizing: Pick<RecallContext, "sessionType" | "contextWindowTokens" | "snapshotWatermark"> = {
      sessionType: "interactive",
      contextWindowTokens: 0,
      snapshotWatermark: null,
    },
  ): RecallContext => ({
    moment,
    sessionId: req.sessionId.slice(0, validate.MAX_CONTEXT_ID),
    runId: req.runId.slice(0, validate.MAX_CONTEXT_ID),
    turnId: req.turnId.slice(0, validate.MAX_CONTEXT_ID),
    surface,
    ...sizing,
  });

  return {
    async *recall(req, ctx) {
      const principal = principalOf(ctx);
      const { query, moment } = validate.recallRequest(req);
      assertSameIdentity(principal, req.query!);
      const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
      const sizing = validate.recallSizing(req, moment);
      const run: RecallRun = {
        principal,
        query,
        context: context(req, surface, moment, sizing),
        kind: moment,
        deadlineAt: deadlineAt(ctx),
        signal: ctx.signal,
      };
      const pipeline = recall(deps, run);
      let step = await pipeline.next();
      while (!step.done) {
        yield create(RecallEventSchema, { event: { case: "arm", value: armToProto(step.value) } });
        step = await pipeline.next();
      }
      noteTraceId(ctx, step.value.result.traceId);
      yield create(RecallEventSchema, { event: { case: "result", value: recallResultToProto(step.value.result) } });
    },

    async search(req, ctx) {
      const principal = principalOf(ctx);
      const query = validate.searchRequest(req);
      const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
      const outcome = await drain(
        recall(deps, {
          principal,
          query,
          context: context(req, surface, "in_turn"),
          kind: "search",
          deadlineAt: deadlineAt(ctx),
          signal: ctx.signal,
        }),
      );
      noteTraceId(ctx, outcome.result.traceId);
      return create(SearchResponseSchema, { result: recallResultToProto(outcome.result) });
    },

    async recallEpisodes(req, ctx) {
      const principal = principalOf(ctx);
      const q = validate.recallEpisodesRequest(req);
      const after = req.pageToken === "" ? null : decodePageToken(req.pageToken);
      const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
      const budget = q.budgetTokens || (q.includeArchival ? EPISODE_BUDGET.archival : EPISODE_BUDGET.live);
      const rows = await deps.store.episodes(principal, {
        sessionId: q.sessionId,
        startTime: q.startTime,
        endTime: q.endTime,
        includeArchival: q.includeArchival,
        sensitivityCeiling: surface.sensitivityCeiling,
        after,
        limit: q.pageSize + 1,
      });
      // Fill the page up to the budget; the first episode always fits so paging cannot stall.
      const page: typeof rows = [];
      let tokens = 0;
      let truncated = false;
      for (const e of rows.slice(0, q.pageSize)) {
        const cost = countTokens(e.content);
        if (page.length > 0 && tokens + cost > budget) {
          truncated = true;
          break;
        }
        page.push(e);
        tokens += cost;
      }
      const more = truncated || rows.length > q.pageSize;
      const last = page[page.length - 1];
      return create(RecallEpisodesResponseSchema, {
        episodes: page.map((e) =>
          create(EpisodeSchema, {
            episodeId: e.episodeId,
            sessionId: e.sessionId,
            occurredAt: toTimestamp(e.occurredAt),
            sequence: BigInt(e.sequence),
            actor: e.actor,
            kind: e.kind,
            content: e.content,
            project: e.project,
            archival: e.archival,
            sensitivity: SENSITIVITY_PB.get(e.sensitivity),
          }),
        ),
        nextPageToken: more && last ? encodePageToken(last) : "",
        tokens,
        truncated,
      });
    },

    async getTrace(req, ctx) {
      const principal = principalOf(ctx);
      const request = validate.getTraceRequest(req, deps.defaultSensitivityCeiling);
      if (request.form === "user") {
        const view = await traceView(deps.store.traces, principal, request.turnId, request.viewingSurface.sensitivityCeiling);
        // Missing and not-yours are the same answer, so turn ids reveal nothing.
        if (!view) throw new NotFoundError("no trace for this turn");
        return create(GetTraceResponseSchema, { view: recallTraceViewToProto(view) });
      }
      const trace = await deps.store.getTrace(principal, request.traceId);
      // Missing and not-yours are the same answer, so ids reveal nothing.
      if (!trace) throw new NotFoundError("trace not found");
      return create(GetTraceResponseSchema, { trace: recallTraceToProto(trace) });
    },
  };
}

function armToProto(o: ArmOutcome) {
  return create(ArmResultSchema, {
    arm: o.arm,
    candidates: o.candidates.map((c, i) => ({ beliefId: c.belief.beliefId, rank: i + 1 })),
    latencyMs: o.latencyMs,
    degraded: o.degraded,
  });
}

async function drain(pipeline: AsyncGenerator<ArmOutcome, RecallOutcome>): Promise<RecallOutcome> {
  let step = await pipeline.next();
  while (!step.done) step = await pipeline.next();
  return step.value;
}

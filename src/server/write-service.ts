import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AppendEpisodesResponseSchema,
  DeleteSessionTracesResponseSchema,
  ErasePrincipalResponseSchema,
  MemoryWriteService,
  PutBeliefsResponseSchema,
  PutSubjectAliasesResponseSchema,
  RecordCitationsResponseSchema,
  RejectBeliefResponseSchema,
  RemovePersonaEntryResponseSchema,
  SetPersonaEntryResponseSchema,
} from "../gen/memory/v1/write_service_pb.js";
import { NotFoundError } from "../domain/errors.js";
import type { Principal } from "../domain/model.js";
import { erasePrincipal } from "../store/erase-principal.js";
import type { MemoryStore } from "../store/memory-store.js";
import { deleteSessionTraces } from "../trace/delete-session.js";
import type { TraceWriter } from "../trace/trace-writer.js";
import { confirmedErasure } from "./wire/erase-request.js";
import { isShortId, resolveCitedIds, shortIdWarnings } from "./wire/short-ids.js";
import { principalOf } from "./identity/identity.js";
import { storeDeadlineOf } from "./store-deadline-interceptor.js";
import * as validate from "./wire/validate.js";

/** How long a citation waits for its trace to be written when the call has no deadline. */
const CITATION_SETTLE_MS = 2_000;

/** Cited ids with the block's short ids ("m:8f21a0c3") resolved to the trace's full ids. */
async function fullCitedIds(store: MemoryStore, p: Principal, traceId: string, cited: readonly string[]): Promise<string[]> {
  if (!cited.some(isShortId)) return [...cited];
  const trace = await store.getTrace(p, traceId);
  if (!trace) throw new NotFoundError("trace not found");
  return resolveCitedIds(cited, trace.returned);
}

/** The write side. Each handler validates the whole request before the store sees any of it. */
export function writeService(deps: {
  store: MemoryStore;
  clock: () => Date;
  /**
   * Called after every write that may have changed what a recall reads, and
   * awaited before the write is acknowledged (the principal index catches up
   * first). `beliefIds`: rows changed without moving the head (citations).
   * `storeDeadline`: the write's, which bounds what this reads too.
   */
  afterWrite?: (p: Principal, beliefIds: readonly string[] | undefined, storeDeadline: number | undefined) => void | Promise<void>;
  /** Called after an erase, with the head position it moved to. */
  afterErase?: (p: Principal, position: number) => void;
  /** Called after a session's traces are deleted, before the deletion is acknowledged. */
  afterSessionDeleted?: (p: Principal, sessionId: string) => void;
  /** Queued traces of a deleted session or an erased principal are dropped, so no retry brings them back; a cited trace still queued is written first. */
  traces?: Pick<TraceWriter, "forgetSession" | "settle" | "forgetPrincipal">;
}): ServiceImpl<typeof MemoryWriteService> {
  // Each call's store calls are bounded by its store deadline.
  const storeOf = (ctx: HandlerContext) => deps.store.at(storeDeadlineOf(ctx));
  const wrote = async <T>(ctx: HandlerContext, result: T, beliefIds?: readonly string[]): Promise<T> => {
    await deps.afterWrite?.(principalOf(ctx), beliefIds, storeDeadlineOf(ctx));
    return result;
  };
  return {
    async putBeliefs(req, ctx) {
      const beliefs = validate.putBeliefs(req, deps.clock());
      // Read before the write: a failed read leaves nothing written, never a write reported as failed.
      const ids = beliefs.map((b) => b.beliefId);
      const warnings = shortIdWarnings(ids, await storeOf(ctx).shortIdNeighbours(principalOf(ctx), ids));
      const { written, position } = await wrote(ctx, await storeOf(ctx).putBeliefs(principalOf(ctx), beliefs));
      return create(PutBeliefsResponseSchema, { written, storePosition: BigInt(position), warnings });
    },
    async appendEpisodes(req, ctx) {
      const episodes = validate.appendEpisodes(req);
      const { appended, position } = await wrote(ctx, await storeOf(ctx).appendEpisodes(principalOf(ctx), episodes));
      return create(AppendEpisodesResponseSchema, { appended, storePosition: BigInt(position) });
    },
    async setPersonaEntry(req, ctx) {
      const beliefId = validate.uuid(req.beliefId, "belief_id");
      const { position } = await wrote(ctx, await storeOf(ctx).setPersonaEntry(principalOf(ctx), beliefId));
      return create(SetPersonaEntryResponseSchema, { storePosition: BigInt(position) });
    },
    async removePersonaEntry(req, ctx) {
      const beliefId = validate.uuid(req.beliefId, "belief_id");
      const { removed, position } = await wrote(ctx, await storeOf(ctx).removePersonaEntry(principalOf(ctx), beliefId));
      return create(RemovePersonaEntryResponseSchema, { removed, storePosition: BigInt(position) });
    },
    async putSubjectAliases(req, ctx) {
      const aliases = validate.subjectAliases(req);
      const { written } = await wrote(ctx, await storeOf(ctx).putSubjectAliases(principalOf(ctx), aliases));
      return create(PutSubjectAliasesResponseSchema, { written });
    },
    async recordCitations(req, ctx) {
      const { traceId, beliefIds, turnId } = validate.citations(req);
      await deps.traces?.settle(principalOf(ctx), (t) => t.id === traceId, Date.now() + (ctx.timeoutMs() ?? CITATION_SETTLE_MS));
      const ids = await fullCitedIds(storeOf(ctx), principalOf(ctx), traceId, beliefIds);
      const { recorded } = await wrote(ctx, await storeOf(ctx).recordCitations(principalOf(ctx), traceId, ids, turnId), ids);
      return create(RecordCitationsResponseSchema, { recorded });
    },
    async rejectBelief(req, ctx) {
      const rejection = validate.rejection(req, deps.clock());
      const { position } = await wrote(ctx, await storeOf(ctx).rejectBelief(principalOf(ctx), rejection));
      return create(RejectBeliefResponseSchema, { storePosition: BigInt(position) });
    },
    async deleteSessionTraces(req, ctx) {
      const { sessionId } = validate.deleteSessionTracesRequest(req);
      const deleted = await deleteSessionTraces(storeOf(ctx), deps.traces, principalOf(ctx), sessionId);
      deps.afterSessionDeleted?.(principalOf(ctx), sessionId);
      return create(DeleteSessionTracesResponseSchema, {
        tracesDeleted: deleted.traces,
        citationsDeleted: deleted.citations,
        eventsDeleted: deleted.events,
      });
    },
    async erasePrincipal(req, ctx) {
      const principal = confirmedErasure(req, principalOf(ctx));
      await deps.traces?.forgetPrincipal(principal);
      const { deleted, position } = await erasePrincipal(storeOf(ctx).db, principal);
      deps.afterErase?.(principal, position);
      return create(ErasePrincipalResponseSchema, { deleted, storePosition: BigInt(position) });
    },
  };
}

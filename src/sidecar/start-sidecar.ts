import { setTimeout as delay } from "node:timers/promises";
import { createConnectRouter, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Config } from "../config/config.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../gen/grpc/health/v1/health_pb.js";
import { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";
import { InspectService } from "../gen/memory/v1/inspect_service_pb.js";
import { inspectService } from "../inspect/inspect-service.js";
import type { InspectorPage } from "../inspect/ui-server.js";
import { baseUrl, inspectorSetup } from "../inspect/ui-setup.js";
import { removeUiRecord, writeUiRecord } from "../inspect/ui-runtime-file.js";
import type { Logger } from "../log/logger.js";
import { documentWeights, RETRIEVAL_POLICY } from "../recall/policy.js";
import { HealthStatus, registerHealth } from "../server/health.js";
import { mapDecodeErrors } from "../server/wire/decode-errors.js";
import { identityInterceptor } from "../server/identity/identity.js";
import { identitySetup, type IdentitySetup } from "../server/identity/identity-setup.js";
import { announceHostCheck, withHostCheck } from "../server/host-check.js";
import { listen } from "../server/listen.js";
import { memoryService } from "../server/memory-service.js";
import { registerReflection } from "../server/reflection.js";
import { requestLogInterceptor, unreadCallLog } from "../server/request-log.js";
import { stringCheckInterceptor } from "../server/wire/string-check.js";
import { storeDeadlineInterceptor } from "../server/store-deadline-interceptor.js";
import { writeService } from "../server/write-service.js";
import type { MemoryStore } from "../store/memory-store.js";
import { openStore } from "../store/open-store.js";
import { openNotificationClient } from "../store/postgres/notification-client.js";
import { claimLease } from "../store/maintenance-lease.js";
import { HeadTracker } from "../recall/moments/head-tracker.js";
import { SessionSnapshots } from "../recall/moments/session-snapshots.js";
import { SessionShown } from "../recall/moments/session-shown.js";
import { SnapshotCache } from "../recall/moments/snapshot-cache.js";
import { cachedSnapshotBytes, snapshotKeyPrefix } from "../recall/moments/snapshot.js";
import { isInTurnOf, isSnapshotOf, SESSION_SHOWN_READ_LIMIT, type CachedSnapshot } from "../recall/pipeline.js";
import { metricsEndpoint } from "../server/metrics.js";
import { armMetrics } from "../metrics/arm-metrics.js";
import { registerCacheMetrics } from "../metrics/cache-metrics.js";
import { registerIndexMetrics } from "../metrics/index-metrics.js";
import { startMetricsServer } from "../metrics/metrics-server.js";
import { createMetricsRegistry } from "../metrics/registry.js";
import { rpcMetricsInterceptor, unreadCallMetrics } from "../metrics/rpc-metrics.js";
import { instrumentedSqlClient } from "../metrics/store-metrics.js";
import { registerTraceWriterMetrics, timedTraceSink } from "../metrics/trace-writer-metrics.js";
import { allObservers } from "../recall/arms/arm.js";
import { startTracing } from "../tracing/start-tracing.js";
import { failingFirstWrites } from "../trace/fault-injection.js";
import { startSweeper } from "../trace/sweeper.js";
import { TraceWriter } from "../trace/trace-writer.js";
import { OutageSpool } from "../trace/outage-spool.js";
import { TraceSpool } from "../trace/trace-spool.js";
import { joinRankedTexts } from "../trace/spooled-ranked.js";
import { SENSITIVITY, type Principal } from "../domain/model.js";
import { createEmbedder } from "../embed/create-embedder.js";
import { withBreaker } from "../embed/embedder-breaker.js";
import { withQueryCache } from "../embed/query-embedding-cache.js";
import { EmbeddingBackfill } from "../embed/embedding-backfill.js";
import type { SemanticSearch } from "../recall/arms/semantic.js";
import { SemanticStore } from "../store/candidates/semantic-store.js";
import { PrincipalIndexes } from "../principal-index/index-router.js";
import { prescanStatements } from "../recall/safety/safety.js";
import { Components } from "./components.js";
import { startIndexWarming, warmListDir } from "./index-warming.js";

/**
 * Composition root: config -> store -> pipeline -> server. Nothing else
 * lives here; every part gets what it needs passed in.
 */

/** Attempts before a trace failing for a non-transient reason is dropped (logged). */
const TRACE_WRITE_MAX_ATTEMPTS = 10;
/** Traces per batch write: one statement of a few hundred rows stays well under any parameter or packet limit. */
const TRACE_BATCH_MAX = 200;
/** Sweep batches per run: bounds one run; the next run continues. */
const SWEEP_MAX_BATCHES = 20;
/** Sessions whose latest snapshot is kept in process (a few KiB each). */
const SESSION_SNAPSHOTS_MAX = 10_000;
/** Ids that sessions' in-turn recalls showed, kept in process for their corrections (about 85 bytes each: 8 MB). */
const SESSION_SHOWN_MAX_IDS = 100_000;
/** Bounds one batch replayed from the outage spool: a blackholed database must not hold the replay. */
const SPOOL_REPLAY_TIMEOUT_MS = 5_000;
/** Shutdown flushes queued traces for at least this long, even when the grace period is spent. */
const MIN_TRACE_FLUSH_MS = 1000;
/** Background embedder backoff while the embedder fails: 1 s, doubling, at most a minute. */
const EMBED_RETRY_MIN_MS = 1000;
const EMBED_RETRY_MAX_MS = 60_000;
/** After a failed query embedding the semantic arm is skipped (degraded) this long: one slow recall per cooldown, not all. */
const QUERY_EMBED_COOLDOWN_MS = 5_000;
/** Query texts whose embedding the semantic arm remembers (384 floats each: about 3 KB apiece). */
const QUERY_EMBEDDINGS_CACHED = 1024;

export interface Sidecar {
  readonly port: number;
  readonly store: MemoryStore;
  readonly traces: TraceWriter;
  /** The memory inspector page (RECALL_UI=on), with the address to open; undefined when off. */
  readonly inspector: { page: InspectorPage; address(principal?: { tenantId: string; principalId: string }): string } | undefined;
  /**
   * Loads a principal's in-process index now, resolving once it serves (at once when the index is
   * off): for a caller about to recall for a principal it has just written (the demo), whose first
   * recalls would otherwise be answered from SQL while the load competes with them and their traces.
   */
  loadIndex(p: Principal): Promise<void>;
  /** Graceful stop: NOT_SERVING, GOAWAY, in-flight calls finish within the grace period, then the store closes. */
  stop(): Promise<void>;
}

/**
 * Starts the sidecar as an ordered list of components (components.ts), each
 * with its stop; stop() and a failed start stop them in reverse. The order is
 * the shutdown's: the health status first (NOT_SERVING), the listener (calls
 * in flight finish within the grace period), the metrics port, the sweeper
 * and the backfill, then the trace writer flushes, the in-process moments and
 * index let go of their LISTEN connections, and the store and the span
 * exporter close last.
 */
export async function startSidecar(config: Config, logger: Logger): Promise<Sidecar> {
  // Before anything is opened: an unsafe listen address is refused outright.
  const identity = await identitySetup(config, logger);
  announceHostCheck(config.hostCheck, { host: config.listen.host, mode: config.identity.mode }, logger);
  const page = inspectorSetup(config);
  const metrics = createMetricsRegistry();
  const parts = new Components();
  try {
    return await startComponents(parts, config, logger, identity, page, metrics);
  } catch (error) {
    // Nothing may stay half-started: every part started above is stopped before the error leaves.
    await parts.stopAll({ deadlineAt: Date.now(), aborted: true });
    throw error;
  }
}

async function startComponents(
  parts: Components,
  config: Config,
  logger: Logger,
  identity: IdentitySetup,
  page: ReturnType<typeof inspectorSetup>,
  metrics: ReturnType<typeof createMetricsRegistry>,
): Promise<Sidecar> {
  const tracing = await parts.start(
    "span exporter",
    () => (config.tracing ? startTracing(config.tracing) : undefined),
    (t, how) => t?.shutdown().catch((err: unknown) => (how.aborted ? undefined : logger.warn({ err }, "spans not exported at shutdown"))),
  );
  const store = await parts.start(
    "store",
    () =>
      openStore(config.store, logger, {
        semantic: config.semantic !== null,
        instrument: (client) => instrumentedSqlClient(client, metrics, config.store.kind === "postgres" ? config.store.poolMax : 1),
      }),
    (s) => s.db.close(),
  );
  if (Object.keys(config.faultArmDelayMs).length > 0) {
    logger.warn({ faultArmDelayMs: config.faultArmDelayMs }, "fault injection active: recall arms are delayed on purpose");
  }
  const clock = () => new Date();
  const notifications = await parts.start("notification connection", () => openNotificationClient(config.store, store.db), (n) => n.close());

  // The in-process moments and index: the head tracker, the principal indexes and the sessions' snapshots.
  const snapshotCache = new SnapshotCache<CachedSnapshot>(config.snapshotCacheBytes, cachedSnapshotBytes);
  const heads = new HeadTracker(store, { listener: notifications.listener, pollMs: config.headPollMs });
  const indexes = new PrincipalIndexes(store, {
    ...config.principalIndex,
    onLoadError: (p, err) => logger.warn({ tenantId: p.tenantId, principalId: p.principalId, err }, "principal index load failed; SQL serves"),
    // The safety scan of a fresh statement is most of a recall's CPU: a loaded principal's are scanned ahead.
    onLoaded: (beliefs) => prescanStatements(beliefs).catch((err: unknown) => logger.warn({ err }, "safety prescan failed")),
  });
  // Each session's snapshot, for the corrections of its in-turn recalls without a round trip.
  const sessionSnapshots = new SessionSnapshots({
    read: (p, sessionId, storeDeadline) => store.at(storeDeadline).traces.latestSnapshot(p, sessionId),
    // The trace writer starts after this part (and so stops before it); it is there before any call.
    settle: (p, sessionId, deadlineAt) => traces.settle(p, isSnapshotOf(sessionId), deadlineAt),
    listener: notifications.listener,
    pollMs: config.headPollMs,
    maxSessions: SESSION_SNAPSHOTS_MAX,
    now: Date.now,
  });
  // What each session's in-turn recalls showed, for the corrections of its later ones (MCP has no snapshot).
  const sessionShown = new SessionShown({
    read: (p, sessionId, limit, storeDeadline) => store.at(storeDeadline).traces.sessionShown(p, sessionId, limit),
    settle: (p, sessionId, deadlineAt) => traces.settle(p, isInTurnOf(sessionId), deadlineAt),
    listener: notifications.listener,
    pollMs: config.headPollMs,
    now: Date.now,
    maxIds: SESSION_SHOWN_MAX_IDS,
    maxIdsPerSession: SESSION_SHOWN_READ_LIMIT,
  });
  await parts.start(
    "moments and index",
    async () => {
      await heads.start();
      logger.info({ heads: heads.freshness, stalenessBoundMs: heads.stalenessBoundMs }, "head tracking");
      await indexes.start();
      await sessionSnapshots.start();
      await sessionShown.start();
    },
    async (_, how) => {
      const stopping = Promise.all([heads.stop(), indexes.stop(), sessionSnapshots.stop(), sessionShown.stop()]);
      if (how.aborted) return await stopping;
      // UNLISTEN on a connection that is down or reconnecting may never be answered; closing the
      // store ends that connection anyway, so the teardown gets a moment, not the power to hang.
      await Promise.race([stopping, delay(MIN_TRACE_FLUSH_MS, undefined, { ref: false })]);
    },
  );
  registerIndexMetrics(metrics, () => indexes.stats);
  // An erased principal's snapshots and index leave memory at once, whichever sidecar erased it.
  heads.onErased((p) => {
    snapshotCache.deleteByPrefix(snapshotKeyPrefix(p));
    sessionSnapshots.forgetPrincipal(p);
    sessionShown.forgetPrincipal(p);
    indexes.drop(p);
  });
  registerCacheMetrics(metrics, () => ({ snapshotCache: snapshotCache.stats(), trackedHeads: heads.size }));

  const traces: TraceWriter = await parts.start(
    "trace writer",
    () => startTraceWriter(config, store, tracing, metrics, logger),
    // Queued traces get what is left of the grace period, and at least a moment.
    (t, how) => t.close(how.aborted ? Date.now() : Math.max(how.deadlineAt, Date.now() + MIN_TRACE_FLUSH_MS)),
  );
  const { semantic, backfill } = await parts.start(
    "semantic arm",
    () => startSemantic(config, store, indexes, logger),
    async (s) => {
      await s.backfill?.stop();
      await s.semantic?.embedder.close?.();
    },
  );
  await parts.start(
    "trace sweeper",
    () => startTraceSweeper(config, store, clock, logger),
    // A sweep stuck on an unreachable store must not hold the shutdown.
    (sw, how) => Promise.race([sw?.stop(), delay(Math.max(0, how.deadlineAt - Date.now()), undefined, { ref: false })]),
  );

  const health = new HealthStatus([MemoryService.typeName, MemoryWriteService.typeName, InspectService.typeName]);
  const handler = await rpcHandler(config, logger, identity, page, metrics, tracing, health, {
    store,
    traces,
    clock,
    heads,
    snapshotCache,
    sessionSnapshots,
    sessionShown,
    indexes,
    semantic,
    backfill,
  });
  const metricsServer = await parts.start(
    "metrics port",
    () => (config.metricsPort !== undefined ? startMetricsServer(metrics, config.listen.host, config.metricsPort) : undefined),
    (m) => m?.close(),
  );
  const server = await parts.start(
    "listener",
    () => {
      const served = withHostCheck(config.hostCheck, { secure: identity.tls !== undefined, logger }, page ? page.wrap(handler) : handler);
      return listen(served, { ...config.listen, limits: config.limits, tls: identity.tls });
    },
    async (srv, how) => {
      const { forced } = await srv.close(how.aborted ? 0 : config.shutdownGraceMs);
      if (forced && !how.aborted) logger.warn({ graceMs: config.shutdownGraceMs }, "grace period expired; remaining calls were cut off");
    },
  );
  page?.listening(server.port);
  await parts.start(
    "health probe",
    () => startHealthProbe(config, store, health, traces, logger),
    (probe) => {
      probe.stop();
      health.shutdown();
    },
  );

  logger.info(
    { host: config.listen.host, port: server.port, socketPath: server.socketPath, metricsPort: metricsServer?.port, store: config.store.kind },
    "recall sidecar listening",
  );

  const warmDir = warmListDir(config);
  if (warmDir !== null) {
    await parts.start("index warming", () => startIndexWarming(indexes, warmDir, config.principalIndex.maxBytes, logger), (w) => w.stop());
  }

  const inspector = page && {
    page,
    address: (principal?: { tenantId: string; principalId: string }) => page.address(baseUrl(config, server.port), principal),
  };
  // Printed once, as Jupyter does: the token in it is made for this start and opens the page.
  if (inspector) {
    logger.info({ url: inspector.address() }, "memory inspector: open this address");
    // For `recall ui` to find (a file only this user can read; removed at stop).
    if (page.gate) {
      await parts.start(
        "inspector runtime file",
        () => writeUiRecord(server.port, { pid: process.pid, url: inspector.address() }).catch((err: unknown) => logger.warn({ err }, "inspector runtime file not written")),
        () => removeUiRecord(server.port),
      );
    }
  }

  let stopping: Promise<void> | undefined;
  return {
    port: server.port,
    store,
    traces,
    inspector,
    loadIndex: (p) => (indexes.enabled ? indexes.load(p) : Promise.resolve()),
    stop() {
      stopping ??= (async () => {
        await parts.stopAll({ deadlineAt: Date.now() + config.shutdownGraceMs, aborted: false });
        logger.info("recall sidecar stopped");
      })();
      return stopping;
    },
  };
}

/** What the RPC handler's services are built on. */
interface ServiceParts {
  store: MemoryStore;
  traces: TraceWriter;
  clock: () => Date;
  heads: HeadTracker;
  snapshotCache: SnapshotCache<CachedSnapshot>;
  sessionSnapshots: SessionSnapshots;
  sessionShown: SessionShown;
  indexes: PrincipalIndexes;
  semantic: SemanticSearch | undefined;
  backfill: EmbeddingBackfill | undefined;
}

/** The Connect handler: every service, its interceptors, GET /metrics and (RECALL_MCP=on) /mcp on the same port. */
async function rpcHandler(
  config: Config,
  logger: Logger,
  identity: IdentitySetup,
  page: ReturnType<typeof inspectorSetup>,
  metrics: ReturnType<typeof createMetricsRegistry>,
  tracing: Awaited<ReturnType<typeof startTracing>> | undefined,
  health: HealthStatus,
  deps: ServiceParts,
) {
  const { store, traces, clock, heads, snapshotCache, sessionSnapshots, sessionShown, indexes, semantic, backfill } = deps;
  const interceptors = [
    ...(tracing ? [tracing.spans.rpcSpanInterceptor(tracing.tracer, { captureQuery: config.tracing!.captureQuery })] : []),
    rpcMetricsInterceptor(metrics),
    requestLogInterceptor(logger),
    // The inspector page's session cookie names its principal; every other call is as before.
    identityInterceptor(page?.gate ? page.gate.identitySource(identity.source) : identity.source),
    stringCheckInterceptor(),
    storeDeadlineInterceptor(config.deadline),
  ];
  const memory = memoryService({
    store,
    traces,
    policy: RETRIEVAL_POLICY,
    clock,
    traceRetentionHours: config.traceOperatorRetentionHours,
    defaultSensitivityCeiling: config.defaultSensitivityCeiling,
    deadline: config.deadline,
    onArmError: (arm, err) => logger.warn({ arm, err }, "recall arm failed; degraded"),
    armDelayMs: config.faultArmDelayMs,
    heads,
    snapshotCache,
    sessionSnapshots,
    sessionShown,
    armObserver: tracing ? allObservers([armMetrics(metrics), tracing.spans.armSpans(tracing.tracer)]) : armMetrics(metrics),
    candidates: indexes,
    ...(semantic ? { semantic } : {}),
  });
  const memoryRoutes = (router: ConnectRouter) => {
    router.service(MemoryService, memory);
    // Search is the model-facing tool: its JSON form refuses unknown keys (such as the old
    // `belief_types`) instead of dropping them. Registered after the service, so it replaces that route.
    router.rpc(MemoryService.method.search, memory.search, { jsonOptions: { ignoreUnknownFields: false } });
  };
  // GET /metrics (Prometheus text) on the same port, and /mcp when RECALL_MCP=on; everything else unknown is a 404.
  const fallback = config.mcp ? await mcpEndpoint(config, identity, interceptors, memoryRoutes, metricsEndpoint(metrics)) : metricsEndpoint(metrics);

  return connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    // Responses are never compressed: they cross a loopback or a Unix socket to the agent beside
    // us, where gzip only burns CPU on both ends (about a millisecond per recall). Compressed
    // requests are still accepted.
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    // A Connect unary call must say Connect-Protocol-Version: 1, which no HTML form or simple fetch
    // can: a call from a page on another origin then needs a CORS preflight, which is never granted.
    requireConnectProtocolHeader: true,
    // Checked against each message's length prefix, so a larger one is refused before it is read.
    readMaxBytes: config.limits.readMaxBytes,
    ...(identity.contextValues ? { contextValues: identity.contextValues } : {}),
    fallback,
    interceptors,
    routes(router) {
      memoryRoutes(router);
      router.service(MemoryWriteService, writeService({
          store,
          clock,
          traces,
          afterWrite: async (p, beliefIds, storeDeadline) => {
            heads.forget(p);
            backfill?.wake(p);
            await indexes.refresh(p, beliefIds, storeDeadline);
          },
          afterErase: (p, position) => heads.erased(p, position),
          afterSessionDeleted: (p, sessionId) => {
            sessionSnapshots.forgetSession(p, sessionId);
            sessionShown.forgetSession(p, sessionId);
          },
        }));
      router.service(InspectService, inspectService({ store, traces, defaultSensitivityCeiling: config.defaultSensitivityCeiling }));
      registerHealth(router, health);
      registerReflection(router, [MemoryService, MemoryWriteService, InspectService, Health]);
      // Unary calls refused before the interceptors (undecodable, over the byte budget) are logged and counted too.
      const unreadLog = unreadCallLog(logger);
      const unreadMetrics = unreadCallMetrics(metrics);
      mapDecodeErrors(router, (req, method, code, message) => {
        unreadLog(req, method, code, message);
        unreadMetrics(req, method, code, message);
      });
    },
  });
}

/** The trace writer over the store (with the fault injection, span and timing wrappers the config asks for). */
async function startTraceWriter(
  config: Config,
  store: MemoryStore,
  tracing: Awaited<ReturnType<typeof startTracing>> | undefined,
  metrics: ReturnType<typeof createMetricsRegistry>,
  logger: Logger,
): Promise<TraceWriter> {
  if (config.faultTraceWriteFailures > 0) {
    logger.warn({ faultTraceWriteFailures: config.faultTraceWriteFailures }, "fault injection active: trace writes fail on purpose");
  }
  const storeSink = config.faultTraceWriteFailures > 0 ? failingFirstWrites(store.traces, config.faultTraceWriteFailures) : store.traces;
  const traceSink = timedTraceSink(tracing ? tracing.spans.tracedTraceSink(storeSink, tracing.tracer) : storeSink, metrics);
  const traces = new TraceWriter(
    traceSink,
    {
      timeoutMs: config.traces.writeTimeoutMs,
      queueMax: config.traces.retryQueueMax,
      retryIntervalMs: config.traces.retryIntervalMs,
      maxAttempts: TRACE_WRITE_MAX_ATTEMPTS,
      flushDelayMs: config.traces.flushMs,
      batchMax: TRACE_BATCH_MAX,
    },
    logger,
    undefined,
    await openOutageSpool(config, store, logger),
  );
  registerTraceWriterMetrics(metrics, traces);
  return traces;
}

/** The retention sweeper, when RECALL_TRACE_SWEEP_INTERVAL_MS is above 0. */
function startTraceSweeper(config: Config, store: MemoryStore, clock: () => Date, logger: Logger) {
  if (config.traces.sweepIntervalMs <= 0) return undefined;
  return startSweeper(
    store.traces,
    clock,
    {
      intervalMs: config.traces.sweepIntervalMs,
      batch: config.traces.sweepBatch,
      maxBatches: SWEEP_MAX_BATCHES,
      uncitedWindowHours: config.traces.uncitedWindowHours,
    },
    logger,
    // One sidecar of the fleet sweeps per interval; the lease runs out a little early so its holder's next tick can renew it.
    () => claimLease(store.db, "trace-sweep", config.traces.sweepIntervalMs * 0.9),
  );
}

/**
 * The health status follows the store: NOT_SERVING while it cannot be reached. Each ping is
 * bounded, so a stalled store is noticed within the interval plus the timeout, and no probe is skipped.
 */
async function startHealthProbe(config: Config, store: MemoryStore, health: HealthStatus, traces: TraceWriter, logger: Logger): Promise<{ stop(): void }> {
  const pingTimeoutMs = Math.min(config.healthTimeoutMs, config.healthIntervalMs);
  const readsThroughOutage = () => config.traces.spool !== null && config.principalIndex.maxBytes > 0;
  let probing = false;
  const probe = async () => {
    if (probing) return;
    probing = true;
    try {
      await store.at(Date.now() + pingTimeoutMs).ping();
      if (health.get("") !== ServingStatus.SERVING) logger.info("store reachable: SERVING");
      health.setAll(ServingStatus.SERVING);
    } catch (err) {
      if (health.get("") !== ServingStatus.NOT_SERVING) logger.error({ err }, "store unreachable: NOT_SERVING");
      // Writes wait for the store; reads of loaded principals are still answered while their traces
      // can go to the outage spool. The overall status follows the store, as before.
      health.set("", ServingStatus.NOT_SERVING);
      health.set(MemoryWriteService.typeName, ServingStatus.NOT_SERVING);
      health.set(MemoryService.typeName, readsThroughOutage() && traces.canRecord ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    } finally {
      probing = false;
    }
  };
  await probe();
  const timer = setInterval(probe, config.healthIntervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** The outage spool of the trace writer, when the store is PostgreSQL (docs/operations.md). */
async function openOutageSpool(config: Config, store: MemoryStore, logger: Logger): Promise<OutageSpool | undefined> {
  if (config.traces.spool === null) return undefined;
  const spool = await TraceSpool.open(config.traces.spool.dir, config.traces.spool.maxBytes, { setting: "RECALL_TRACE_SPOOL_DIR" });
  return new OutageSpool(
    spool,
    async (records, deadlineAt) => {
      const traces = store.at(deadlineAt).traces;
      // Spooled ranked lists hold belief ids and scores: their texts are joined back here.
      const { batch, unmatched } = await joinRankedTexts(records, (p, ids) => traces.beliefTexts(p, ids));
      if (unmatched > 0) logger.warn({ unmatched, traceIds: batch.map((b) => b.trace.id) }, "spooled traces rank beliefs changed since: their texts are left empty");
      return traces.recordBatch(batch);
    },
    { retryIntervalMs: config.traces.retryIntervalMs, batchMax: TRACE_BATCH_MAX, writeTimeoutMs: SPOOL_REPLAY_TIMEOUT_MS },
    logger,
  );
}

/**
 * MCP over Streamable HTTP at /mcp (RECALL_MCP=on): the tool calls run through a router of their
 * own holding the memory routes, with the same interceptors as every RPC. Loaded only when on.
 */
async function mcpEndpoint(
  config: Config,
  identity: IdentitySetup,
  interceptors: Interceptor[],
  memoryRoutes: (router: ConnectRouter) => void,
  otherwise: ReturnType<typeof metricsEndpoint>,
) {
  const { withMcpEndpoint } = await import("../mcp/http-endpoint.js");
  const router = createConnectRouter({ interceptors, readMaxBytes: config.limits.readMaxBytes });
  memoryRoutes(router);
  mapDecodeErrors(router);
  const options = {
    router,
    identity,
    mode: config.identity.mode,
    deadlineMs: config.deadline.defaultMs,
    maxBodyBytes: config.limits.readMaxBytes,
    maxConcurrentCalls: config.limits.maxConcurrentStreams,
  };
  return withMcpEndpoint(options, otherwise);
}

/** The semantic arm and its background embedder, when RECALL_SEMANTIC=on. */
function startSemantic(
  config: Config,
  store: MemoryStore,
  indexes: PrincipalIndexes,
  logger: Logger,
): { semantic?: SemanticSearch; backfill?: EmbeddingBackfill } {
  if (config.semantic === null) return {};
  const embedder = createEmbedder(config.semantic);
  const semanticStore = new SemanticStore(store.db, documentWeights(RETRIEVAL_POLICY));
  // The arm is answered in process where the principal's index serves (no index has loaded yet: none serves calls).
  indexes.holdVectors(semanticStore.storedId(embedder.id));
  const backfill = new EmbeddingBackfill(
    semanticStore,
    embedder,
    {
      batch: config.semantic.batch,
      pollIntervalMs: config.semantic.pollIntervalMs,
      retryMinMs: EMBED_RETRY_MIN_MS,
      retryMaxMs: EMBED_RETRY_MAX_MS,
      sensitivityCeiling: SENSITIVITY[config.semantic.sensitivityCeiling],
      // One sidecar of the fleet sweeps every principal per interval.
      claimSweep: () => claimLease(store.db, "embedding-sweep", config.semantic!.pollIntervalMs * 0.9),
    },
    logger,
  );
  backfill.start();
  // The embedder's id names kind, model and dimension; the API key is never logged.
  logger.info({ embedder: embedder.id, similarity: config.semantic.similarity }, "semantic arm on");
  return {
    semantic: {
      embedder: withBreaker(withQueryCache(embedder, QUERY_EMBEDDINGS_CACHED), QUERY_EMBED_COOLDOWN_MS),
      store: semanticStore,
      similarity: config.semantic.similarity,
    },
    backfill,
  };
}

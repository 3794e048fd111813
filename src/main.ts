import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Config } from "./config.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "./gen/grpc/health/v1/health_pb.js";
import { MemoryService } from "./gen/memory/v1/memory_service_pb.js";
import { MemoryWriteService } from "./gen/memory/v1/write_service_pb.js";
import type { Logger } from "./logger.js";
import { RETRIEVAL_POLICY } from "./recall/policy.js";
import { HealthStatus, registerHealth } from "./server/health.js";
import { identityInterceptor } from "./server/identity.js";
import { listen, type RunningServer } from "./server/listen.js";
import { memoryService } from "./server/memory-service.js";
import { registerReflection } from "./server/reflection.js";
import { requestLogInterceptor } from "./server/request-log.js";
import { writeService } from "./server/write-service.js";
import type { MemoryStore } from "./store/memory-store.js";
import { openStore } from "./store/open-store.js";

/**
 * Composition root: config -> store -> pipeline -> server. Nothing else
 * lives here; every part gets what it needs passed in.
 */

export interface Sidecar {
  readonly port: number;
  readonly store: MemoryStore;
  /** Graceful stop: NOT_SERVING, GOAWAY, in-flight calls finish within the grace period, then the store closes. */
  stop(): Promise<void>;
}

export async function startSidecar(config: Config, logger: Logger): Promise<Sidecar> {
  const store = await openStore(config.store, logger);
  if (Object.keys(config.faultArmDelayMs).length > 0) {
    logger.warn({ faultArmDelayMs: config.faultArmDelayMs }, "fault injection active: recall arms are delayed on purpose");
  }
  const clock = () => new Date();
  const health = new HealthStatus([MemoryService.typeName, MemoryWriteService.typeName]);

  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    interceptors: [requestLogInterceptor(logger), identityInterceptor()],
    routes(router) {
      const memory = memoryService({
        store,
        policy: RETRIEVAL_POLICY,
        clock,
        traceRetentionHours: config.traceOperatorRetentionHours,
        defaultSensitivityCeiling: config.defaultSensitivityCeiling,
        deadline: config.deadline,
        onArmError: (arm, err) => logger.warn({ arm, err }, "recall arm failed; degraded"),
        armDelayMs: config.faultArmDelayMs,
      });
      router.service(MemoryService, memory);
      // Search is the model-facing tool: its JSON form refuses unknown keys (such as the old
      // `belief_types`) instead of dropping them. Registered after the service, so it replaces that route.
      router.rpc(MemoryService.method.search, memory.search, { jsonOptions: { ignoreUnknownFields: false } });
      router.service(MemoryWriteService, writeService({ store, clock }));
      registerHealth(router, health);
      registerReflection(router, [MemoryService, MemoryWriteService, Health]);
    },
  });

  let server: RunningServer;
  try {
    server = await listen(handler, config.listen);
  } catch (error) {
    await store.db.close();
    throw error;
  }

  // The health status follows the store: NOT_SERVING while it cannot be reached.
  let probing = false;
  const probe = async () => {
    if (probing) return;
    probing = true;
    try {
      await store.ping();
      if (health.get("") !== ServingStatus.SERVING) logger.info("store reachable: SERVING");
      health.setAll(ServingStatus.SERVING);
    } catch (err) {
      if (health.get("") !== ServingStatus.NOT_SERVING) logger.error({ err }, "store unreachable: NOT_SERVING");
      health.setAll(ServingStatus.NOT_SERVING);
    } finally {
      probing = false;
    }
  };
  await probe();
  const timer = setInterval(probe, config.healthIntervalMs);
  timer.unref();

  logger.info(
    { host: config.listen.host, port: server.port, socketPath: server.socketPath, store: config.store.kind },
    "recall sidecar listening",
  );

  let stopping: Promise<void> | undefined;
  return {
    port: server.port,
    store,
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        health.shutdown();
        const { forced } = await server.close(config.shutdownGraceMs);
        if (forced) logger.warn({ graceMs: config.shutdownGraceMs }, "grace period expired; remaining calls were cut off");
        await store.db.close();
        logger.info("recall sidecar stopped");
      })();
      return stopping;
    },
  };
}

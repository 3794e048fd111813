import { z } from "zod";

/**
 * The only reader of `process.env`. One zod schema, validated once at start-up
 * into a frozen object that is passed down; a bad value stops the process with
 * a message naming the variable.
 */

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const sensitivityName = z.enum(["public", "personal", "confidential", "restricted"]);

const envSchema = z.object({
  RECALL_HOST: z.string().min(1).default("127.0.0.1"),
  RECALL_PORT: port.default(50051),
  RECALL_SOCKET_PATH: z.string().min(1).optional(),
  RECALL_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  RECALL_DATA_DIR: z.string().min(1).default("./.recall-data"),
  RECALL_DB_POOL_MAX: positiveInt.max(100).default(10),
  RECALL_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  RECALL_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  RECALL_DEFAULT_DEADLINE_MS: positiveInt.default(2_000),
  RECALL_MAX_DEADLINE_MS: positiveInt.default(30_000),
  RECALL_HEALTH_INTERVAL_MS: positiveInt.default(2_000),
  RECALL_DEFAULT_SENSITIVITY_CEILING: sensitivityName.default("personal"),
  RECALL_TRACE_OPERATOR_RETENTION_HOURS: positiveInt.default(24 * 14),
  RECALL_SNAPSHOT_CACHE_MB: z.coerce.number().min(0).max(4096).default(64),
  RECALL_TRACE_WRITE_TIMEOUT_MS: positiveInt.default(250),
  RECALL_TRACE_RETRY_QUEUE_MAX: positiveInt.default(1000),
  RECALL_TRACE_RETRY_INTERVAL_MS: positiveInt.default(1000),
  RECALL_TRACE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  RECALL_TRACE_SWEEP_BATCH: positiveInt.max(100_000).default(500),
  RECALL_UNCITED_WINDOW_HOURS: positiveInt.default(24),
  RECALL_FAULT_TRACE_WRITE_FAILURES: z.coerce.number().int().min(0).optional(),
  RECALL_FAULT_ARM_DELAY: z
    .string()
    .regex(/^[a-z_]+=\d+(,[a-z_]+=\d+)*$/, 'must look like "lexical=500,structured=0"')
    .optional(),
});

export type SensitivityName = z.infer<typeof sensitivityName>;

export interface Config {
  readonly listen: { readonly host: string; readonly port: number; readonly socketPath: string | undefined };
  readonly store:
    | { readonly kind: "postgres"; readonly url: string; readonly poolMax: number }
    | { readonly kind: "pglite"; readonly dataDir: string };
  readonly logLevel: string;
  readonly shutdownGraceMs: number;
  readonly deadline: { readonly defaultMs: number; readonly maxMs: number };
  readonly healthIntervalMs: number;
  readonly defaultSensitivityCeiling: SensitivityName;
  readonly traceOperatorRetentionHours: number;
  /** Upper bound of the in-process snapshot cache, in bytes. */
  readonly snapshotCacheBytes: number;
  readonly traces: {
    /** How long a recall waits for its trace write before answering without it. */
    readonly writeTimeoutMs: number;
    /** Traces that may wait for a retry; beyond it a recall fails UNAVAILABLE. */
    readonly retryQueueMax: number;
    readonly retryIntervalMs: number;
    /** How often the retention and feedback sweeps run; 0 turns the periodic sweep off. */
    readonly sweepIntervalMs: number;
    /** Rows per sweep batch. */
    readonly sweepBatch: number;
    /** Returned beliefs not cited within this many hours lose utility. */
    readonly uncitedWindowHours: number;
  };
  /** Fault injection for tests and drills: the first N trace writes fail. Never set in production. */
  readonly faultTraceWriteFailures: number;
  /** Fault injection for tests and drills: extra milliseconds before an arm starts. Never set in production. */
  readonly faultArmDelayMs: Readonly<Record<string, number>>;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Parses the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset", as shells and container specs often pass them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  if (e.RECALL_DEFAULT_DEADLINE_MS > e.RECALL_MAX_DEADLINE_MS) {
    throw new ConfigError(
      "invalid configuration:\n  RECALL_DEFAULT_DEADLINE_MS: must not exceed RECALL_MAX_DEADLINE_MS",
    );
  }
  return Object.freeze({
    listen: Object.freeze({ host: e.RECALL_HOST, port: e.RECALL_PORT, socketPath: e.RECALL_SOCKET_PATH }),
    store: Object.freeze(
      e.RECALL_DATABASE_URL
        ? { kind: "postgres" as const, url: e.RECALL_DATABASE_URL, poolMax: e.RECALL_DB_POOL_MAX }
        : { kind: "pglite" as const, dataDir: e.RECALL_DATA_DIR },
    ),
    logLevel: e.RECALL_LOG_LEVEL,
    shutdownGraceMs: e.RECALL_SHUTDOWN_GRACE_MS,
    deadline: Object.freeze({ defaultMs: e.RECALL_DEFAULT_DEADLINE_MS, maxMs: e.RECALL_MAX_DEADLINE_MS }),
    healthIntervalMs: e.RECALL_HEALTH_INTERVAL_MS,
    defaultSensitivityCeiling: e.RECALL_DEFAULT_SENSITIVITY_CEILING,
    traceOperatorRetentionHours: e.RECALL_TRACE_OPERATOR_RETENTION_HOURS,
    snapshotCacheBytes: Math.round(e.RECALL_SNAPSHOT_CACHE_MB * 1024 * 1024),
    traces: Object.freeze({
      writeTimeoutMs: e.RECALL_TRACE_WRITE_TIMEOUT_MS,
      retryQueueMax: e.RECALL_TRACE_RETRY_QUEUE_MAX,
      retryIntervalMs: e.RECALL_TRACE_RETRY_INTERVAL_MS,
      sweepIntervalMs: e.RECALL_TRACE_SWEEP_INTERVAL_MS,
      sweepBatch: e.RECALL_TRACE_SWEEP_BATCH,
      uncitedWindowHours: e.RECALL_UNCITED_WINDOW_HOURS,
    }),
    faultTraceWriteFailures: e.RECALL_FAULT_TRACE_WRITE_FAILURES ?? 0,
    faultArmDelayMs: Object.freeze(
      Object.fromEntries(
        (e.RECALL_FAULT_ARM_DELAY ?? "")
          .split(",")
          .filter((pair) => pair !== "")
          .map((pair) => {
            const [arm, ms] = pair.split("=");
            return [arm!, Number(ms)];
          }),
      ),
    ),
  });
}

import { z } from "zod";
import { DEFAULT_SEMANTIC_SIMILARITY, type SemanticSimilarity } from "../domain/semantic-calibration.js";
import { defaultModelDir } from "./model-cache.js";
import { edgeEnvSchema, edgeHostCheck, edgeIdentity, edgeLimits, type EdgeLimits, type HostCheck, type IdentityConfig, type TlsConfig } from "./edge-config.js";

/**
 * The only reader of `process.env`. One zod schema, validated once at start-up
 * into a frozen object that is passed down; a bad value stops the process with
 * a message naming the variable.
 */

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL");
const sensitivityName = z.enum(["public", "personal", "confidential", "restricted"]);

const envSchema = z.object({
  RECALL_HOST: z.string().min(1).default("127.0.0.1"),
  RECALL_PORT: port.default(50051),
  RECALL_SOCKET_PATH: z.string().min(1).optional(),
  RECALL_METRICS_PORT: port.optional(),
  // The memory inspector page at /ui/ (docs/inspector.md).
  RECALL_UI: z.enum(["on", "off"]).default("off"),
  RECALL_DATABASE_URL: postgresUrl.optional(),
  // Behind a pooler: see docs/scale-out.md.
  RECALL_DATABASE_POOLER: z.enum(["none", "transaction"]).default("none"),
  RECALL_DATABASE_LISTEN_URL: postgresUrl.optional(),
  RECALL_HEAD_POLL_MS: positiveInt.max(60_000).default(1000),
  RECALL_DATA_DIR: z.string().min(1).default("./.recall-data"),
  RECALL_DB_POOL_MAX: positiveInt.max(100).default(10),
  RECALL_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  RECALL_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  RECALL_DEFAULT_DEADLINE_MS: positiveInt.default(2_000),
  RECALL_MAX_DEADLINE_MS: positiveInt.default(30_000),
  RECALL_HEALTH_INTERVAL_MS: positiveInt.default(2_000),
  RECALL_HEALTH_TIMEOUT_MS: positiveInt.default(1_000),
  RECALL_DEFAULT_SENSITIVITY_CEILING: sensitivityName.default("personal"),
  RECALL_TRACE_OPERATOR_RETENTION_HOURS: positiveInt.default(24 * 14),
  RECALL_SNAPSHOT_CACHE_MB: z.coerce.number().min(0).max(4096).default(64),
  // The in-process principal index: see docs/moments-and-caching.md.
  RECALL_INDEX_MB: z.coerce.number().min(0).max(65_536).default(512),
  RECALL_INDEX_HEAD_CHECK_MS: positiveInt.max(3_600_000).default(1_000),
  // A restarted sidecar loads the indexes it held before (warm-principals.json in the data directory).
  RECALL_INDEX_WARM: z.enum(["on", "off"]).default("on"),
  // Default: 250 ms on PostgreSQL, EMBEDDED_TRACE_WRITE_TIMEOUT_MS on the embedded store (see there).
  RECALL_TRACE_WRITE_TIMEOUT_MS: positiveInt.optional(),
  RECALL_TRACE_RETRY_QUEUE_MAX: positiveInt.default(1000),
  RECALL_TRACE_RETRY_INTERVAL_MS: positiveInt.default(1000),
  // The outage spool (PostgreSQL only): see docs/operations.md. Default: the data directory.
  RECALL_TRACE_SPOOL_DIR: z.string().min(1).optional(),
  RECALL_TRACE_SPOOL_MB: z.coerce.number().min(0).max(1_048_576).default(256),
  // 10 ms: at one recall every few ms, a 2 ms window wrote each trace alone, and a statement per
  // trace cost the sidecar and PostgreSQL about twice the CPU of a shared one (ADR 0001, sixth follow-up).
  RECALL_TRACE_FLUSH_MS: z.coerce.number().int().min(0).max(1000).default(10),
  RECALL_TRACE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  RECALL_TRACE_SWEEP_BATCH: positiveInt.max(100_000).default(500),
  RECALL_UNCITED_WINDOW_HOURS: positiveInt.default(24),
  RECALL_FAULT_TRACE_WRITE_FAILURES: z.coerce.number().int().min(0).optional(),
  RECALL_FAULT_ARM_DELAY: z
    .string()
    .regex(/^[a-z_]+=\d+(,[a-z_]+=\d+)*$/, 'must look like "lexical=500,structured=0"')
    .optional(),
  // OpenTelemetry tracing is on when the endpoint is set; the SDK reads its other OTEL_* variables itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("recall"),
  // The query text on the read RPCs' spans (gen_ai.memory.query.text): user data, so off unless asked for.
  RECALL_OTEL_CAPTURE_QUERY: z.enum(["off", "on"]).default("off"),
  // The MCP endpoint (POST /mcp, Streamable HTTP) on the sidecar's port: see docs/mcp.md.
  RECALL_MCP: z.enum(["off", "on"]).default("off"),
  // The semantic arm (off by default): see docs/semantic-arm.md.
  RECALL_SEMANTIC: z.enum(["off", "on"]).default("off"),
  RECALL_EMBEDDER: z.enum(["openai", "local", "hashed"]).default("openai"),
  // RECALL_EMBEDDER=local: the model folder (default: where `npm run model:fetch` puts it, under
  // RECALL_MODEL_CACHE) and the worker's threads.
  RECALL_EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  RECALL_MODEL_CACHE: z.string().min(1).optional(),
  RECALL_EMBEDDER_THREADS: positiveInt.max(64).default(1),
  RECALL_EMBEDDINGS_URL: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  RECALL_EMBEDDINGS_MODEL: z.string().min(1).optional(),
  RECALL_EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  // RECALL_EMBEDDER=openai: put before every query / every document text, as e5, bge or nomic expect
  // (a local folder's prefixes come from its config_sentence_transformers.json).
  RECALL_EMBEDDINGS_QUERY_PREFIX: z.string().max(200).optional(),
  RECALL_EMBEDDINGS_DOCUMENT_PREFIX: z.string().max(200).optional(),
  // pgvector's vector type holds at most 16,000 dimensions.
  RECALL_EMBEDDING_DIMENSIONS: positiveInt.max(16_000).optional(),
  RECALL_EMBEDDINGS_TIMEOUT_MS: positiveInt.default(10_000),
  RECALL_EMBEDDINGS_BATCH: positiveInt.max(2048).default(64),
  RECALL_EMBEDDINGS_POLL_MS: positiveInt.default(60_000),
  RECALL_EMBEDDINGS_SENSITIVITY_CEILING: sensitivityName.default("confidential"),
  // Cosine similarities; the defaults depend on RECALL_EMBEDDER (src/domain/semantic-calibration.ts).
  RECALL_SEMANTIC_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).optional(),
  RECALL_SEMANTIC_FULL_SIMILARITY: z.coerce.number().min(-1).max(1).optional(),
}).extend(edgeEnvSchema.shape);

export type SensitivityName = z.infer<typeof sensitivityName>;

export interface Config {
  readonly listen: { readonly host: string; readonly port: number; readonly socketPath: string | undefined };
  /** Also serve GET /metrics on this port (on listen.host); undefined: only on the RPC port. */
  readonly metricsPort: number | undefined;
  /** Serve the memory inspector at /ui/ (RECALL_UI=on). */
  readonly ui: boolean;
  readonly store:
    | {
        readonly kind: "postgres";
        readonly url: string;
        readonly poolMax: number;
        /** "transaction": the URL is a transaction-mode pooler (unnamed statements, no LISTEN through it). */
        readonly pooler: "none" | "transaction";
        /** A direct (unpooled) URL for the notification connection. */
        readonly listenUrl: string | undefined;
      }
    | { readonly kind: "pglite"; readonly dataDir: string };
  readonly logLevel: string;
  readonly shutdownGraceMs: number;
  readonly deadline: { readonly defaultMs: number; readonly maxMs: number };
  readonly healthIntervalMs: number;
  /** Bounds each health ping (never more than the interval): a store that does not answer in time is NOT_SERVING. */
  readonly healthTimeoutMs: number;
  /** Without a notification connection, a principal's head is read again after this long. */
  readonly headPollMs: number;
  readonly defaultSensitivityCeiling: SensitivityName;
  readonly traceOperatorRetentionHours: number;
  /** Upper bound of the in-process snapshot cache, in bytes. */
  readonly snapshotCacheBytes: number;
  /**
   * The in-process principal index: its byte bound (0 = off), how long it trusts the tracked head
   * without a check, and the directory of the warm list a restart loads from (null: index or warming off).
   */
  readonly principalIndex: { readonly maxBytes: number; readonly headCheckMs: number; readonly warmDir: string | null };
  readonly traces: {
    /** A trace batch write slower than this is logged as slow, and the next batch goes beside it. */
    readonly writeTimeoutMs: number;
    /** Traces that may wait to be written; beyond it a recall fails UNAVAILABLE. */
    readonly retryQueueMax: number;
    readonly retryIntervalMs: number;
    /** How long a queued trace waits for others to share its batch write. */
    readonly flushMs: number;
    /** How often the retention and feedback sweeps run; 0 turns the periodic sweep off. */
    readonly sweepIntervalMs: number;
    /** Rows per sweep batch. */
    readonly sweepBatch: number;
    /** Returned beliefs not cited within this many hours lose utility. */
    readonly uncitedWindowHours: number;
    /** Where traces go while PostgreSQL cannot take them; null on PGlite (in-process) or with RECALL_TRACE_SPOOL_MB=0. */
    readonly spool: { readonly dir: string; readonly maxBytes: number } | null;
  };
  /** Fault injection for tests and drills: the first N trace writes fail. Never set in production. */
  readonly faultTraceWriteFailures: number;
  /** Fault injection for tests and drills: extra milliseconds before an arm starts. Never set in production. */
  readonly faultArmDelayMs: Readonly<Record<string, number>>;
  /** The semantic arm; null when RECALL_SEMANTIC=off (the default). */
  readonly semantic: SemanticConfig | null;
  /** OpenTelemetry span export; null (off, and the SDK never loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  readonly tracing: { readonly serviceName: string; readonly captureQuery: boolean } | null;
  /** Serve MCP (Streamable HTTP) at /mcp on the sidecar's port (docs/mcp.md). */
  readonly mcp: boolean;
  /** Request size, stream and connection-time limits (see docs/operations.md, "Limits and timeouts"). */
  readonly limits: EdgeLimits;
  /** Where tenant and principal come from (see docs/identity-and-deployment.md, "Who may call"). */
  readonly identity: IdentityConfig;
  /** TLS on the TCP listener; null for plaintext (h2c). */
  readonly tls: TlsConfig | null;
  /** The Host and Origin names a TCP request may carry (RECALL_ALLOWED_HOSTS; docs/identity-and-deployment.md). */
  readonly hostCheck: HostCheck;
}

export interface SemanticConfig {
  readonly embedder:
    | {
        readonly kind: "openai";
        /** Base URL: requests go to POST {baseUrl}/embeddings. */
        readonly baseUrl: string;
        readonly model: string;
        /** Put before each query's and each document text's input ("" for none). */
        readonly prefixes: { readonly query: string; readonly document: string };
        /** Sent as a Bearer token. Never logged: the property is not enumerable. */
        readonly apiKey: string | undefined;
      }
    | {
        readonly kind: "local";
        /** A sentence-transformers folder with model.onnx (src/embed/local-model-folder.ts). */
        readonly modelDir: string;
        readonly threads: number;
        /** RECALL_EMBEDDING_DIMENSIONS when set: the model's must match (checked when the embedder is made). */
        readonly expectedDimensions: number | undefined;
      }
    | { readonly kind: "hashed" };
  /** Of the openai and hashed embedders (a local model's is its own). */
  readonly dimensions: number;
  /** Bounds one background embedding request (a query's embedding is bounded by the recall's deadline). */
  readonly timeoutMs: number;
  /** Statements per background embedding request. */
  readonly batch: number;
  /** How often the background embedder sweeps every principal for beliefs written elsewhere (imports, other sidecars). */
  readonly pollIntervalMs: number;
  /** Beliefs above this sensitivity are never sent to the embedder (and so never found by the semantic arm). */
  readonly sensitivityCeiling: SensitivityName;
  /** What a cosine similarity is worth: below `min` no candidate, from `full` full weight. */
  readonly similarity: SemanticSimilarity;
}

/** The hashed embedder's dimension when none is configured. */
export const DEFAULT_HASHED_DIMENSIONS = 256;

/**
 * The embedded store's trace write timeout. Its statements run one at a time
 * on one thread, so a batch that outlives the timeout cannot have the next one
 * written beside it (they queue on that thread): the timeout only decides when
 * a write is called slow. Its first trace write after a start runs cold (140 to
 * 380 ms on a loaded two-core machine, where PostgreSQL's 250 ms made `npm run
 * demo` end with a "trace write is slow" line); 2 s still flags a stuck one.
 */
export const EMBEDDED_TRACE_WRITE_TIMEOUT_MS = 2_000;

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
  const semantic = e.RECALL_SEMANTIC === "on" ? semanticConfig(e) : null;
  const edge = edgeIdentity(e);
  if ("problems" in edge) throw new ConfigError(`invalid configuration:\n  ${edge.problems.join("\n  ")}`);
  return Object.freeze({
    listen: Object.freeze({ host: e.RECALL_HOST, port: e.RECALL_PORT, socketPath: e.RECALL_SOCKET_PATH }),
    metricsPort: e.RECALL_METRICS_PORT,
    ui: e.RECALL_UI === "on",
    store: Object.freeze(
      e.RECALL_DATABASE_URL
        ? {
            kind: "postgres" as const,
            url: e.RECALL_DATABASE_URL,
            poolMax: e.RECALL_DB_POOL_MAX,
            pooler: e.RECALL_DATABASE_POOLER,
            listenUrl: e.RECALL_DATABASE_LISTEN_URL,
          }
        : { kind: "pglite" as const, dataDir: e.RECALL_DATA_DIR },
    ),
    logLevel: e.RECALL_LOG_LEVEL,
    shutdownGraceMs: e.RECALL_SHUTDOWN_GRACE_MS,
    deadline: Object.freeze({ defaultMs: e.RECALL_DEFAULT_DEADLINE_MS, maxMs: e.RECALL_MAX_DEADLINE_MS }),
    healthIntervalMs: e.RECALL_HEALTH_INTERVAL_MS,
    healthTimeoutMs: e.RECALL_HEALTH_TIMEOUT_MS,
    headPollMs: e.RECALL_HEAD_POLL_MS,
    defaultSensitivityCeiling: e.RECALL_DEFAULT_SENSITIVITY_CEILING,
    traceOperatorRetentionHours: e.RECALL_TRACE_OPERATOR_RETENTION_HOURS,
    snapshotCacheBytes: Math.round(e.RECALL_SNAPSHOT_CACHE_MB * 1024 * 1024),
    principalIndex: Object.freeze({
      maxBytes: Math.round(e.RECALL_INDEX_MB * 1024 * 1024),
      headCheckMs: e.RECALL_INDEX_HEAD_CHECK_MS,
      warmDir: e.RECALL_INDEX_WARM === "on" && e.RECALL_INDEX_MB > 0 ? e.RECALL_DATA_DIR : null,
    }),
    traces: Object.freeze({
      writeTimeoutMs: e.RECALL_TRACE_WRITE_TIMEOUT_MS ?? (e.RECALL_DATABASE_URL ? 250 : EMBEDDED_TRACE_WRITE_TIMEOUT_MS),
      retryQueueMax: e.RECALL_TRACE_RETRY_QUEUE_MAX,
      retryIntervalMs: e.RECALL_TRACE_RETRY_INTERVAL_MS,
      flushMs: e.RECALL_TRACE_FLUSH_MS,
      sweepIntervalMs: e.RECALL_TRACE_SWEEP_INTERVAL_MS,
      sweepBatch: e.RECALL_TRACE_SWEEP_BATCH,
      uncitedWindowHours: e.RECALL_UNCITED_WINDOW_HOURS,
      spool:
        e.RECALL_DATABASE_URL && e.RECALL_TRACE_SPOOL_MB > 0
          ? Object.freeze({ dir: e.RECALL_TRACE_SPOOL_DIR ?? e.RECALL_DATA_DIR, maxBytes: Math.round(e.RECALL_TRACE_SPOOL_MB * 1024 * 1024) })
          : null,
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
    semantic,
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? Object.freeze({ serviceName: e.OTEL_SERVICE_NAME, captureQuery: e.RECALL_OTEL_CAPTURE_QUERY === "on" })
      : null,
    mcp: e.RECALL_MCP === "on",
    limits: edgeLimits(e),
    identity: edge.identity,
    tls: edge.tls,
    hostCheck: edgeHostCheck(e),
  });
}

function semanticConfig(e: z.infer<typeof envSchema>): SemanticConfig {
  const missing: string[] = [];
  if (e.RECALL_EMBEDDER === "openai") {
    // An endpoint's vectors have the model's dimension: it cannot be guessed, and the stored vectors depend on it.
    for (const name of ["RECALL_EMBEDDINGS_URL", "RECALL_EMBEDDINGS_MODEL", "RECALL_EMBEDDING_DIMENSIONS"] as const) {
      if (e[name] === undefined) missing.push(`${name}: required when RECALL_SEMANTIC=on and RECALL_EMBEDDER=openai`);
    }
  } else {
    for (const name of ["RECALL_EMBEDDINGS_QUERY_PREFIX", "RECALL_EMBEDDINGS_DOCUMENT_PREFIX"] as const) {
      if (e[name] !== undefined) {
        missing.push(`${name}: only with RECALL_EMBEDDER=openai (a local model folder's prefixes are its config_sentence_transformers.json prompts)`);
      }
    }
  }
  const defaults = DEFAULT_SEMANTIC_SIMILARITY[e.RECALL_EMBEDDER];
  const similarity = Object.freeze({
    min: e.RECALL_SEMANTIC_MIN_SIMILARITY ?? defaults.min,
    full: e.RECALL_SEMANTIC_FULL_SIMILARITY ?? defaults.full,
  });
  if (similarity.full <= similarity.min) {
    missing.push(`RECALL_SEMANTIC_FULL_SIMILARITY: must be greater than RECALL_SEMANTIC_MIN_SIMILARITY (${similarity.min})`);
  }
  if (missing.length > 0) throw new ConfigError(`invalid configuration:\n  ${missing.join("\n  ")}`);
  const embedder: SemanticConfig["embedder"] =
    e.RECALL_EMBEDDER === "openai"
      ? withHiddenKey(
          {
            kind: "openai",
            baseUrl: e.RECALL_EMBEDDINGS_URL!,
            model: e.RECALL_EMBEDDINGS_MODEL!,
            prefixes: Object.freeze({ query: e.RECALL_EMBEDDINGS_QUERY_PREFIX ?? "", document: e.RECALL_EMBEDDINGS_DOCUMENT_PREFIX ?? "" }),
          },
          e.RECALL_EMBEDDINGS_API_KEY,
        )
      : e.RECALL_EMBEDDER === "local"
        ? Object.freeze({ kind: "local" as const, modelDir: e.RECALL_EMBEDDING_MODEL_DIR ?? defaultModelDir(e.RECALL_MODEL_CACHE),
            threads: e.RECALL_EMBEDDER_THREADS,
            expectedDimensions: e.RECALL_EMBEDDING_DIMENSIONS,
          })
        : Object.freeze({ kind: "hashed" as const });
  return Object.freeze({
    embedder,
    dimensions: e.RECALL_EMBEDDING_DIMENSIONS ?? DEFAULT_HASHED_DIMENSIONS,
    timeoutMs: e.RECALL_EMBEDDINGS_TIMEOUT_MS,
    batch: e.RECALL_EMBEDDINGS_BATCH,
    pollIntervalMs: e.RECALL_EMBEDDINGS_POLL_MS,
    sensitivityCeiling: e.RECALL_EMBEDDINGS_SENSITIVITY_CEILING,
    similarity,
  });
}

/** The API key as a non-enumerable property: JSON.stringify and pino leave it out of any log line. */
function withHiddenKey<T extends object>(target: T, apiKey: string | undefined): Readonly<T & { apiKey: string | undefined }> {
  Object.defineProperty(target, "apiKey", { value: apiKey, enumerable: false });
  return Object.freeze(target as T & { apiKey: string | undefined });
}

import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected loadConfig to throw");
}

describe("loadConfig: defaults", () => {
  it("listens on 127.0.0.1:50051 with an embedded pglite store in ./.recall-data", () => {
    // toMatchObject: fields added to Config later do not break this test.
    expect(loadConfig({})).toMatchObject({
      listen: { host: "127.0.0.1", port: 50051, socketPath: undefined },
      store: { kind: "pglite", dataDir: "./.recall-data" },
      logLevel: "info",
      shutdownGraceMs: 10_000,
      deadline: { defaultMs: 2_000, maxMs: 30_000 },
      healthIntervalMs: 2_000,
      defaultSensitivityCeiling: "personal",
      traceOperatorRetentionHours: 336,
    });
  });

  it("ignores unrelated variables", () => {
    expect(loadConfig({ PATH: "/usr/bin", HOME: "/root" }).listen.port).toBe(50051);
  });

  it("returns a frozen object", () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.listen)).toBe(true);
    expect(Object.isFrozen(config.store)).toBe(true);
    expect(Object.isFrozen(config.deadline)).toBe(true);
  });
});

describe("loadConfig: values", () => {
  it("uses postgres when RECALL_DATABASE_URL is set", () => {
    expect(loadConfig({ RECALL_DATABASE_URL: "postgres://u:p@db:5432/recall" }).store).toEqual({
      kind: "postgres",
      url: "postgres://u:p@db:5432/recall",
      poolMax: 10,
      pooler: "none",
      listenUrl: undefined,
    });
    expect(loadConfig({ RECALL_DATABASE_URL: "postgresql://db/recall", RECALL_DB_POOL_MAX: "4" }).store).toEqual({
      kind: "postgres",
      url: "postgresql://db/recall",
      poolMax: 4,
      pooler: "none",
      listenUrl: undefined,
    });
  });

  it("reads the pooler settings: transaction mode, a direct URL to LISTEN on, the head polling interval", () => {
    const config = loadConfig({
      RECALL_DATABASE_URL: "postgres://recall@pgbouncer:6432/recall",
      RECALL_DATABASE_POOLER: "transaction",
      RECALL_DATABASE_LISTEN_URL: "postgres://recall@db:5432/recall",
      RECALL_HEAD_POLL_MS: "250",
    });
    expect(config.store).toMatchObject({ pooler: "transaction", listenUrl: "postgres://recall@db:5432/recall" });
    expect(config.headPollMs).toBe(250);
    expect(loadConfig({}).headPollMs).toBe(1000);
    expect(configError({ RECALL_DATABASE_POOLER: "session" }).message).toContain("RECALL_DATABASE_POOLER");
    expect(configError({ RECALL_DATABASE_LISTEN_URL: "db:5432" }).message).toContain("RECALL_DATABASE_LISTEN_URL: must be a postgres://");
    expect(configError({ RECALL_HEAD_POLL_MS: "0" }).message).toContain("RECALL_HEAD_POLL_MS");
  });

  it("uses pglite in RECALL_DATA_DIR when no database URL is set", () => {
    expect(loadConfig({ RECALL_DATA_DIR: "/var/lib/recall" }).store).toEqual({ kind: "pglite", dataDir: "/var/lib/recall" });
  });

  it("parses host, port, socket, log level, deadlines and ceiling", () => {
    const config = loadConfig({
      RECALL_HOST: "0.0.0.0",
      RECALL_PORT: "6000",
      RECALL_SOCKET_PATH: "/tmp/recall.sock",
      RECALL_LOG_LEVEL: "debug",
      RECALL_SHUTDOWN_GRACE_MS: "0",
      RECALL_DEFAULT_DEADLINE_MS: "500",
      RECALL_MAX_DEADLINE_MS: "500",
      RECALL_HEALTH_INTERVAL_MS: "100",
      RECALL_DEFAULT_SENSITIVITY_CEILING: "confidential",
      RECALL_TRACE_OPERATOR_RETENTION_HOURS: "1",
    });
    expect(config).toMatchObject({
      listen: { host: "0.0.0.0", port: 6000, socketPath: "/tmp/recall.sock" },
      store: { kind: "pglite", dataDir: "./.recall-data" },
      logLevel: "debug",
      shutdownGraceMs: 0,
      deadline: { defaultMs: 500, maxMs: 500 },
      healthIntervalMs: 100,
      defaultSensitivityCeiling: "confidential",
      traceOperatorRetentionHours: 1,
    });
  });

  it("reads the trace writer, sweep and feedback settings, with documented defaults", () => {
    // The embedded store's writes queue on one thread: its slow-write timeout is longer than PostgreSQL's.
    expect(loadConfig({ RECALL_DATABASE_URL: "postgres://db/recall" }).traces.writeTimeoutMs).toBe(250);
    expect(loadConfig({})).toMatchObject({
      traces: { writeTimeoutMs: 2000, retryQueueMax: 1000, retryIntervalMs: 1000, flushMs: 10, sweepIntervalMs: 60_000, sweepBatch: 500, uncitedWindowHours: 24 },
      faultTraceWriteFailures: 0,
    });
    const config = loadConfig({
      RECALL_TRACE_WRITE_TIMEOUT_MS: "50",
      RECALL_TRACE_RETRY_QUEUE_MAX: "3",
      RECALL_TRACE_RETRY_INTERVAL_MS: "100",
      RECALL_TRACE_FLUSH_MS: "0",
      RECALL_TRACE_SWEEP_INTERVAL_MS: "0",
      RECALL_TRACE_SWEEP_BATCH: "10",
      RECALL_UNCITED_WINDOW_HOURS: "2",
      RECALL_FAULT_TRACE_WRITE_FAILURES: "1",
    });
    expect(config.traces).toEqual({ writeTimeoutMs: 50, retryQueueMax: 3, retryIntervalMs: 100, flushMs: 0, sweepIntervalMs: 0, sweepBatch: 10, uncitedWindowHours: 2, spool: null });
    // The outage spool is for PostgreSQL: in the data directory unless set, 256 MiB unless set, 0 turns it off.
    const pg = { RECALL_DATABASE_URL: "postgres://h/db", RECALL_DATA_DIR: "/var/lib/recall" };
    expect(loadConfig(pg).traces.spool).toEqual({ dir: "/var/lib/recall", maxBytes: 256 * 1024 * 1024 });
    expect(loadConfig({ ...pg, RECALL_TRACE_SPOOL_DIR: "/spool", RECALL_TRACE_SPOOL_MB: "1" }).traces.spool).toEqual({ dir: "/spool", maxBytes: 1024 * 1024 });
    expect(loadConfig({ ...pg, RECALL_TRACE_SPOOL_MB: "0" }).traces.spool).toBeNull();
    // A flush delay is a few milliseconds; a second is the most a trace may wait for company.
    expect(() => loadConfig({ RECALL_TRACE_FLUSH_MS: "1001" })).toThrow(/RECALL_TRACE_FLUSH_MS/);
    expect(() => loadConfig({ RECALL_TRACE_FLUSH_MS: "-1" })).toThrow(/RECALL_TRACE_FLUSH_MS/);
    expect(config.faultTraceWriteFailures).toBe(1);
    expect(Object.isFrozen(config.traces)).toBe(true);
  });

  it("accepts port 0 (ephemeral) and 65535", () => {
    expect(loadConfig({ RECALL_PORT: "0" }).listen.port).toBe(0);
    expect(loadConfig({ RECALL_PORT: "65535" }).listen.port).toBe(65535);
  });

  it("treats empty strings as unset", () => {
    const config = loadConfig({
      RECALL_HOST: "",
      RECALL_PORT: "",
      RECALL_DATABASE_URL: "",
      RECALL_LOG_LEVEL: "",
      RECALL_SOCKET_PATH: "",
      RECALL_DEFAULT_DEADLINE_MS: "",
    });
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 50051, socketPath: undefined });
    expect(config.store).toEqual({ kind: "pglite", dataDir: "./.recall-data" });
    expect(config.logLevel).toBe("info");
    expect(config.deadline.defaultMs).toBe(2_000);
  });
});

describe("loadConfig: errors name the variable", () => {
  it.each([
    ["RECALL_PORT", "abc"],
    ["RECALL_PORT", "70000"],
    ["RECALL_PORT", "-1"],
    ["RECALL_PORT", "50051.5"],
    ["RECALL_LOG_LEVEL", "verbose"],
    ["RECALL_DATABASE_URL", "mysql://db/recall"],
    ["RECALL_DATABASE_URL", "db.example.com:5432"],
    ["RECALL_DB_POOL_MAX", "0"],
    ["RECALL_DB_POOL_MAX", "101"],
    ["RECALL_DEFAULT_DEADLINE_MS", "0"],
    ["RECALL_MAX_DEADLINE_MS", "soon"],
    ["RECALL_HEALTH_INTERVAL_MS", "-5"],
    ["RECALL_SHUTDOWN_GRACE_MS", "-1"],
    ["RECALL_DEFAULT_SENSITIVITY_CEILING", "secret"],
    ["RECALL_TRACE_OPERATOR_RETENTION_HOURS", "0"],
    ["RECALL_TRACE_WRITE_TIMEOUT_MS", "0"],
    ["RECALL_TRACE_RETRY_QUEUE_MAX", "none"],
    ["RECALL_TRACE_RETRY_INTERVAL_MS", "-1"],
    ["RECALL_TRACE_SWEEP_INTERVAL_MS", "-1"],
    ["RECALL_TRACE_SWEEP_BATCH", "0"],
    ["RECALL_UNCITED_WINDOW_HOURS", "1.5"],
    ["RECALL_FAULT_TRACE_WRITE_FAILURES", "-2"],
  ])("rejects %s=%j", (name, value) => {
    const error = configError({ [name]: value });
    expect(error.name).toBe("ConfigError");
    expect(error.message).toMatch(/^invalid configuration:\n {2}/);
    expect(error.message).toContain(`${name}: `);
  });

  it("names every bad variable at once", () => {
    const error = configError({ RECALL_PORT: "x", RECALL_LOG_LEVEL: "loud" });
    expect(error.message).toContain("RECALL_PORT: ");
    expect(error.message).toContain("RECALL_LOG_LEVEL: ");
    expect(error.message.split("\n")).toHaveLength(3);
  });

  it("explains a malformed database URL", () => {
    expect(configError({ RECALL_DATABASE_URL: "mysql://db" }).message).toBe(
      "invalid configuration:\n  RECALL_DATABASE_URL: must be a postgres:// or postgresql:// URL",
    );
  });

  it("rejects a default deadline above the max deadline", () => {
    expect(configError({ RECALL_DEFAULT_DEADLINE_MS: "5000", RECALL_MAX_DEADLINE_MS: "1000" }).message).toBe(
      "invalid configuration:\n  RECALL_DEFAULT_DEADLINE_MS: must not exceed RECALL_MAX_DEADLINE_MS",
    );
    // The default of 2000 ms against a max lowered below it.
    expect(configError({ RECALL_MAX_DEADLINE_MS: "1000" }).message).toContain("RECALL_DEFAULT_DEADLINE_MS");
  });
});

describe("loadConfig: the semantic arm", () => {
  const openai = {
    RECALL_SEMANTIC: "on",
    RECALL_EMBEDDINGS_URL: "https://embeddings.example/v1",
    RECALL_EMBEDDINGS_MODEL: "text-embedding-3-small",
    RECALL_EMBEDDING_DIMENSIONS: "1536",
    RECALL_EMBEDDINGS_API_KEY: "sk-secret-key",
  };

  it("is off by default", () => {
    expect(loadConfig({}).semantic).toBeNull();
    expect(loadConfig({ RECALL_SEMANTIC: "off", RECALL_EMBEDDER: "hashed" }).semantic).toBeNull();
  });

  it("defaults to the OpenAI-compatible embedder and needs its URL, model and dimension", () => {
    const error = configError({ RECALL_SEMANTIC: "on" });
    expect(error.message).toMatch(/^invalid configuration:\n {2}/);
    for (const name of ["RECALL_EMBEDDINGS_URL", "RECALL_EMBEDDINGS_MODEL", "RECALL_EMBEDDING_DIMENSIONS"]) {
      expect(error.message).toContain(`${name}: required when RECALL_SEMANTIC=on and RECALL_EMBEDDER=openai`);
    }
  });

  it("parses the OpenAI-compatible embedder", () => {
    const semantic = loadConfig(openai).semantic!;
    expect(semantic).toMatchObject({
      embedder: { kind: "openai", baseUrl: "https://embeddings.example/v1", model: "text-embedding-3-small", apiKey: "sk-secret-key" },
      dimensions: 1536,
      timeoutMs: 10_000,
      batch: 64,
      pollIntervalMs: 60_000,
      sensitivityCeiling: "confidential",
    });
    expect(Object.isFrozen(semantic)).toBe(true);
    expect(Object.isFrozen(semantic.embedder)).toBe(true);
  });

  it("reads the endpoint's query and document prefixes, none by default, and refuses them for other embedders", () => {
    expect(loadConfig(openai).semantic!.embedder).toMatchObject({ prefixes: { query: "", document: "" } });
    const prefixed = { ...openai, RECALL_EMBEDDINGS_QUERY_PREFIX: "search_query: ", RECALL_EMBEDDINGS_DOCUMENT_PREFIX: "search_document: " };
    expect(loadConfig(prefixed).semantic!.embedder).toMatchObject({ prefixes: { query: "search_query: ", document: "search_document: " } });
    expect(() => loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_EMBEDDINGS_QUERY_PREFIX: "query: " })).toThrow(
      /RECALL_EMBEDDINGS_QUERY_PREFIX: only with RECALL_EMBEDDER=openai/,
    );
    expect(() => loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "hashed", RECALL_EMBEDDINGS_DOCUMENT_PREFIX: "passage: " })).toThrow(
      /RECALL_EMBEDDINGS_DOCUMENT_PREFIX: only with RECALL_EMBEDDER=openai/,
    );
  });

  it("never lets the API key reach a log line: it is not enumerable", () => {
    const config = loadConfig(openai);
    expect(JSON.stringify(config)).not.toContain("sk-secret-key");
    expect(Object.keys(config.semantic!.embedder)).not.toContain("apiKey");
  });

  it("the hashed embedder needs nothing else and defaults to 256 dimensions", () => {
    expect(loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "hashed" }).semantic).toMatchObject({
      embedder: { kind: "hashed" },
      dimensions: 256,
    });
  });

  it("the local embedder reads the model folder of RECALL_EMBEDDING_MODEL_DIR, by default the model cache's", () => {
    expect(loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_MODEL_CACHE: "/cache" }).semantic!.embedder).toEqual({
      kind: "local",
      modelDir: "/cache/all-MiniLM-L6-v2-int8",
      threads: 1,
      expectedDimensions: undefined,
    });
    expect(
      loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_EMBEDDING_MODEL_DIR: "/models/mini", RECALL_EMBEDDER_THREADS: "2" }).semantic!.embedder,
    ).toMatchObject({ modelDir: "/models/mini", threads: 2 });
    expect(configError({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_EMBEDDER_THREADS: "0" }).message).toContain("RECALL_EMBEDDER_THREADS: ");
  });

  it("calibrates the semantic arm's similarities per embedder kind, overridable", () => {
    expect(loadConfig(openai).semantic!.similarity).toEqual({ min: 0.3, full: 0.6 });
    expect(loadConfig({ RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "hashed" }).semantic!.similarity).toEqual({ min: 0.2, full: 0.5 });
    const ada = loadConfig({ ...openai, RECALL_SEMANTIC_MIN_SIMILARITY: "0.78", RECALL_SEMANTIC_FULL_SIMILARITY: "0.88" });
    expect(ada.semantic!.similarity).toEqual({ min: 0.78, full: 0.88 });
  });

  it("refuses a full similarity that is not above the minimum, naming it", () => {
    expect(configError({ ...openai, RECALL_SEMANTIC_MIN_SIMILARITY: "0.7" }).message).toContain(
      "RECALL_SEMANTIC_FULL_SIMILARITY: must be greater than RECALL_SEMANTIC_MIN_SIMILARITY (0.7)",
    );
  });

  it.each([
    ["RECALL_SEMANTIC_MIN_SIMILARITY", "1.5"],
    ["RECALL_SEMANTIC_FULL_SIMILARITY", "high"],
    ["RECALL_SEMANTIC", "yes"],
    ["RECALL_EMBEDDER", "word2vec"],
    ["RECALL_EMBEDDINGS_URL", "ftp://embeddings.example"],
    ["RECALL_EMBEDDING_DIMENSIONS", "0"],
    ["RECALL_EMBEDDING_DIMENSIONS", "16001"],
    ["RECALL_EMBEDDINGS_BATCH", "5000"],
    ["RECALL_EMBEDDINGS_SENSITIVITY_CEILING", "secret"],
  ])("rejects %s=%j naming it", (name, value) => {
    expect(configError({ ...openai, [name]: value }).message).toContain(`${name}: `);
  });
});

describe("loadConfig: the opt-ins of issue 39", () => {
  it("the query text stays off spans unless asked for", () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing).toMatchObject({ captureQuery: false });
    const opted = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", RECALL_OTEL_CAPTURE_QUERY: "on" });
    expect(opted.tracing).toMatchObject({ captureQuery: true });
  });

  it("/mcp stays off unless asked for", () => {
    expect(loadConfig({}).mcp).toBe(false);
    expect(loadConfig({ RECALL_MCP: "on" }).mcp).toBe(true);
  });

  it("refuses anything but on and off, naming the variable", () => {
    expect(configError({ RECALL_OTEL_CAPTURE_QUERY: "yes" }).message).toContain("RECALL_OTEL_CAPTURE_QUERY");
    expect(configError({ RECALL_MCP: "true" }).message).toContain("RECALL_MCP");
  });
});

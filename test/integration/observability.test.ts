import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { parsePrometheusText } from "../support/prometheus-text.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** What an operator sees: the call log lines and /metrics, on the RPC port and on RECALL_METRICS_PORT. */
describe("call logs and metrics", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  let traceId: string;
  beforeAll(async () => {
    // The lexical arm is held back past the recall's deadline, so it degrades (and the recall still answers).
    // The first trace write fails as if the store were gone, and is retried from the queue.
    sidecar = await startSidecarProcess("pglite", {
      RECALL_METRICS_PORT: "0",
      RECALL_FAULT_ARM_DELAY: "lexical=60000",
      RECALL_FAULT_TRACE_WRITE_FAILURES: "1",
      RECALL_TRACE_RETRY_INTERVAL_MS: "200",
    });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's editor is Helix." })] }, me);
    const events = await serverStream(c.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { text: "which editor", subjects: ["Andy"] } }, me, 8000);
    const result = events.at(-1)!.result as Json;
    expect(result.arms_degraded).toEqual(["lexical"]);
    traceId = result.trace_id as string;
    expect((await failure(unary(c.memory, "GetTrace", { trace_id: "not-a-uuid" }, me))).code).toBe(grpc.status.INVALID_ARGUMENT);
  }, 90_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const callLines = () =>
    sidecar
      .logs()
      .split("\n")
      .filter((l) => l.includes('"msg":"call'))
      .map((l) => JSON.parse(l) as Json);

  it("logs one call line per RPC: method, canonical status, duration, trace id, tenant, principal, ISO-8601 time", async () => {
    // Call lines are written in batches, at most 250 ms after the call (log/logger.ts).
    for (let i = 0; i < 50 && callLines().length < 3; i++) await new Promise((r) => setTimeout(r, 100));
    const recall = callLines().find((l) => l.method === "memory.v1.MemoryService/Recall" && l.traceId === traceId);
    expect(recall).toMatchObject({ level: 30, msg: "call", code: "OK", tenant: me.tenant, principal: me.principal });
    expect(recall!.durationMs).toEqual(expect.any(Number));
    expect(recall!.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // A caller's mistake is logged at info with its canonical name, never as a server failure.
    const bad = callLines().find((l) => l.method === "memory.v1.MemoryService/GetTrace");
    expect(bad).toMatchObject({ level: 30, msg: "call", code: "INVALID_ARGUMENT", tenant: me.tenant, principal: me.principal });
    expect(callLines().filter((l) => l.method === "memory.v1.MemoryWriteService/PutBeliefs")).toHaveLength(1);
  });

  it("serves per-RPC, per-arm, trace-writer, store, cache and process metrics in the Prometheus text format", async () => {
    const metricsPort = (JSON.parse(sidecar.logs().split("\n").find((l) => l.includes('"recall sidecar listening"'))!) as Json).metricsPort as number;
    expect(metricsPort).toBeGreaterThan(0);
    const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toContain("text/plain");
    let m = parsePrometheusText(await own.text());
    // The failed trace write is retried in the background: wait for it to land.
    for (let i = 0; i < 100 && m.value("recall_trace_writes_total", { outcome: "retried" }) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      m = parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    }

    const rpc = (method: string, status: string) => ({ rpc_system_name: "grpc", rpc_method: method, rpc_response_status_code: status });
    expect(m.types.get("rpc_server_call_duration_seconds")).toBe("histogram");
    expect(m.value("rpc_server_call_duration_seconds_count", rpc("memory.v1.MemoryService/Recall", "OK"))).toBe(1);
    expect(m.value("rpc_server_call_duration_seconds_count", rpc("memory.v1.MemoryService/GetTrace", "INVALID_ARGUMENT"))).toBe(1);
    expect(m.value("rpc_server_call_duration_seconds_count", rpc("memory.v1.MemoryWriteService/PutBeliefs", "OK"))).toBe(1);
    expect(m.value("recall_rpc_server_active_calls", { rpc_method: "memory.v1.MemoryService/Recall" })).toBe(0);

    expect(m.value("recall_arm_duration_seconds_count", { arm: "lexical", moment: "in_turn" })).toBe(1);
    expect(m.value("recall_arm_duration_seconds_count", { arm: "structured", moment: "in_turn" })).toBe(1);
    expect(m.value("recall_arm_degraded_total", { arm: "lexical", moment: "in_turn" })).toBe(1);

    expect(m.value("recall_trace_writes_total", { outcome: "written" })).toBe(0);
    expect(m.value("recall_trace_writes_total", { outcome: "failed" })).toBe(1);
    expect(m.value("recall_trace_writes_total", { outcome: "retried" })).toBe(1);
    expect(m.value("recall_trace_writes_given_up_total")).toBe(0);
    expect(m.value("recall_trace_writer_backlog")).toBe(0);
    expect(m.value("recall_trace_write_duration_seconds_count", { outcome: "error" })).toBe(1);
    expect(m.value("recall_trace_write_duration_seconds_count", { outcome: "ok" })).toBe(1);

    expect(m.value("recall_store_pool_max", { store: "pglite" })).toBe(1);
    expect(m.value("recall_store_pool_in_use", { store: "pglite" })).toBeGreaterThanOrEqual(0);
    expect(m.types.get("recall_store_errors_total")).toBe("counter");

    // Today's names keep working.
    expect(m.value("recall_snapshot_cache_misses_total")).toBe(0);
    expect(m.value("recall_snapshot_cache_max_bytes")).toBe(64 * 1024 * 1024);
    expect(m.value("recall_tracked_heads")).toBeGreaterThanOrEqual(0);
    // The principal indexes register their statistics on the same registry.
    expect(m.types.get("recall_index_loads_total")).toBe("counter");
    expect(m.value("recall_index_max_bytes")).toBeGreaterThan(0);
    // Default process and Node metrics.
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes"]) {
      expect(m.has(name)).toBe(true);
    }

    // The RPC port serves the same registry.
    const onRpcPort = parsePrometheusText(await (await fetch(`http://${sidecar.address}/metrics`)).text());
    expect(onRpcPort.value("recall_arm_degraded_total", { arm: "lexical", moment: "in_turn" })).toBe(1);
  });
});

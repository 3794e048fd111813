import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, grpc, metadata, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { attribute, otlpReceiver, until } from "../support/otlp-receiver.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** With OTEL_EXPORTER_OTLP_ENDPOINT set, the sidecar exports a span tree per RPC under the caller's trace. */
describe("OpenTelemetry spans over OTLP/HTTP", () => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    receiver = await otlpReceiver();
    sidecar = await startSidecarProcess("pglite", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "200", OTEL_SERVICE_NAME: "recall-test" });
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
    await receiver?.close();
  });

  it("a server span per RPC, parented on the caller's traceparent, with child spans per arm; a span per trace batch write", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's editor is Helix." })] }, me);

    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const md = metadata(me);
    md.set("traceparent", `00-${callerTrace}-${callerSpan}-01`);
    let traceId = "";
    await new Promise<void>((resolve, reject) => {
      const call = c.memory.Recall({ moment: "MOMENT_IN_TURN", query: { text: "which editor", subjects: ["Andy"] } }, md, { deadline: Date.now() + 10_000 });
      call.on("data", (event: { result?: { trace_id: string } }) => {
        if (event.result) traceId = event.result.trace_id;
      });
      call.on("error", reject);
      call.on("end", resolve);
    });

    const server = await until(() => receiver.spans.find((s) => s.name === "memory.v1.MemoryService/Recall"), "the Recall server span");
    expect(server).toMatchObject({ traceId: callerTrace, parentSpanId: callerSpan, kind: 2 });
    expect(attribute(server, "rpc.system.name")).toBe("grpc");
    expect(attribute(server, "rpc.method")).toBe("memory.v1.MemoryService/Recall");
    expect(attribute(server, "rpc.response.status_code")).toBe("OK");
    // GenAI memory conventions: the operation and the records returned; never the query text unless opted in.
    expect(attribute(server, "gen_ai.operation.name")).toBe("search_memory");
    expect(attribute(server, "gen_ai.memory.record.count")).toBe(1);
    expect(attribute(server, "gen_ai.memory.store.id")).toBe(`${me.tenant}/${me.principal}`);
    expect(attribute(server, "gen_ai.memory.query.text")).toBeUndefined();

    const children = await until(() => {
      const below = receiver.spans.filter((s) => s.parentSpanId === server.spanId);
      return below.filter((s) => s.name.startsWith("recall.arm ")).length >= 2 ? below : undefined;
    }, "the arm spans");
    // The trace batch write may run under the span too: its timer is set in the call's context.
    expect(children.map((s) => s.name).filter((n) => n !== "recall.trace_write").sort()).toEqual(["recall.arm lexical", "recall.arm structured"]);
    for (const child of children) expect(child.traceId).toBe(callerTrace);
    const lexical = children.find((s) => s.name === "recall.arm lexical")!;
    expect(attribute(lexical, "recall.moment")).toBe("in_turn");
    // The trace is written in a batch from the writer's queue: a span naming the recall's trace id.
    const write = await until(
      () => receiver.spans.find((s) => s.name === "recall.trace_write" && JSON.stringify(attribute(s, "recall.trace_ids")).includes(traceId)),
      "the trace-write span",
    );
    expect(traceId).not.toBe("");
    expect(attribute(write, "recall.trace_count")).toEqual(expect.anything());

    // A call without a traceparent starts a trace of its own; its status is the canonical name.
    const failed = await unary(c.memory, "GetTrace", { trace_id: "not-a-uuid" }, me).catch((e: { code: number }) => e);
    expect((failed as { code: number }).code).toBe(grpc.status.INVALID_ARGUMENT);
    const getTrace = await until(() => receiver.spans.find((s) => s.name === "memory.v1.MemoryService/GetTrace"), "the GetTrace span");
    expect(getTrace.traceId).not.toBe(callerTrace);
    expect(attribute(getTrace, "rpc.response.status_code")).toBe("INVALID_ARGUMENT");
    // GetTrace reads a trace, not memory: no GenAI memory attributes.
    expect(attribute(getTrace, "gen_ai.operation.name")).toBeUndefined();
  });
});



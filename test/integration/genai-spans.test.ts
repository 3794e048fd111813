import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, metadata, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { attribute, otlpReceiver, until, type OtlpSpan } from "../support/otlp-receiver.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * OpenTelemetry's GenAI memory conventions on the read RPCs' spans, with the query text opted in
 * (RECALL_OTEL_CAPTURE_QUERY=on). Without the opt-in no span carries it: tracing.test.ts checks that.
 */
describe("GenAI memory attributes with RECALL_OTEL_CAPTURE_QUERY=on", () => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    receiver = await otlpReceiver();
    sidecar = await startSidecarProcess("pglite", {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "200",
      RECALL_OTEL_CAPTURE_QUERY: "on",
    });
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
    await receiver?.close();
  });

  /** The span of the call that sent `marker` as its traceparent's trace id. */
  const spanOf = (name: string, traceId: string) =>
    until(() => receiver.spans.find((s: OtlpSpan) => s.name === name && s.traceId === traceId), `the ${name} span`);
  const traced = (me: { tenant: string; principal: string }, traceId: string) => {
    const md = metadata(me);
    md.set("traceparent", `00-${traceId}-00f067aa0ba902b7-01`);
    return md;
  };

  it("Search, Recall and RecallEpisodes carry search_memory, the store, the record count and the query text", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's editor is Helix." })] }, me);
    await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: "s-otel" }), episodeMsg({ session_id: "s-otel" })] }, me);

    const searchTrace = "11111111111111111111111111111111";
    await new Promise((resolve, reject) =>
      c.memory.Search({ text: "which editor does Andy use" }, traced(me, searchTrace), (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))),
    );
    const search = await spanOf("memory.v1.MemoryService/Search", searchTrace);
    expect(attribute(search, "gen_ai.operation.name")).toBe("search_memory");
    expect(attribute(search, "gen_ai.memory.query.text")).toBe("which editor does Andy use");
    expect(attribute(search, "gen_ai.memory.record.count")).toBe(1);
    expect(attribute(search, "gen_ai.memory.store.id")).toBe(`${me.tenant}/${me.principal}`);
    expect(attribute(search, "error.type")).toBeUndefined();

    const recallTrace = "22222222222222222222222222222222";
    await new Promise<void>((resolve, reject) => {
      const call = c.memory.Recall({ moment: "MOMENT_IN_TURN", query: { text: "Andy editor" } }, traced(me, recallTrace), { deadline: Date.now() + 10_000 });
      call.on("data", () => {});
      call.on("error", reject);
      call.on("end", resolve);
    });
    const recall = await spanOf("memory.v1.MemoryService/Recall", recallTrace);
    expect(attribute(recall, "gen_ai.operation.name")).toBe("search_memory");
    expect(attribute(recall, "gen_ai.memory.query.text")).toBe("Andy editor");
    expect(attribute(recall, "gen_ai.memory.record.count")).toBe(1);

    const episodesTrace = "33333333333333333333333333333333";
    await new Promise((resolve, reject) =>
      c.memory.RecallEpisodes({ session_id: "s-otel" }, traced(me, episodesTrace), (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))),
    );
    const episodes = await spanOf("memory.v1.MemoryService/RecallEpisodes", episodesTrace);
    expect(attribute(episodes, "gen_ai.operation.name")).toBe("search_memory");
    expect(attribute(episodes, "gen_ai.memory.record.count")).toBe(2);
    // A page of episodes is found by session and time, not by a text query.
    expect(attribute(episodes, "gen_ai.memory.query.text")).toBeUndefined();
  });

  it("a failed search names its error type and returns no record count", async () => {
    const me = newIdentity();
    const failedTrace = "44444444444444444444444444444444";
    const err = await failure(
      new Promise((resolve, reject) =>
        c.memory.Search({ text: "" }, traced(me, failedTrace), (e: Error | null, res: unknown) => (e ? reject(e) : resolve(res))),
      ),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    const span = await spanOf("memory.v1.MemoryService/Search", failedTrace);
    expect(attribute(span, "gen_ai.operation.name")).toBe("search_memory");
    expect(attribute(span, "error.type")).toBe("INVALID_ARGUMENT");
    expect(attribute(span, "gen_ai.memory.record.count")).toBeUndefined();
  });
});

/**
 * Calling the sidecar from TypeScript with the connect-es generated client
 * (@connectrpc/connect + @connectrpc/connect-node over gRPC): write a belief,
 * open a session with a snapshot, then recall in a turn with the snapshot's
 * watermark, as an agent runtime does. The generated code is this
 * repository's src/gen (buf generate); in your own project, generate it from
 * proto/ with the same buf.gen.yaml.
 *
 *   npx tsc -p examples/typescript && node examples/typescript/dist/examples/typescript/recall-example.js [http://127.0.0.1:50051]
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MemoryService } from "../../src/gen/memory/v1/memory_service_pb.js";
import { Authority, BeliefSchema, BeliefStatus, Moment, Portability, ScopeLevel } from "../../src/gen/memory/v1/types_pb.js";
import { MemoryWriteService } from "../../src/gen/memory/v1/write_service_pb.js";

/** Returns the in-turn block; throws when the written belief is not in it. */
export async function runExample(baseUrl: string, who = { tenant: "example-tenant", principal: "andy" }): Promise<string> {
  // Every call carries the caller's identity as metadata.
  const identity: Interceptor = (next) => (req) => {
    req.header.set("x-tenant-id", who.tenant);
    req.header.set("x-principal-id", who.principal);
    return next(req);
  };
  const transport = createGrpcTransport({ baseUrl, interceptors: [identity] });
  const write = createClient(MemoryWriteService, transport);
  const memory = createClient(MemoryService, transport);

  const now = new Date();
  await write.putBeliefs({
    beliefs: [
      create(BeliefSchema, {
        beliefId: "8f21a0c3-0000-4000-8000-000000000001",
        subject: "Andy",
        statement: "Andy's editor is Helix.",
        beliefType: "preference",
        status: BeliefStatus.ACTIVE,
        confidence: 0.9,
        authority: Authority.USER,
        originScope: "veetbot",
        scopeLevel: ScopeLevel.USER,
        portability: Portability.PORTABLE,
        validFrom: timestampFromDate(now),
        recordedAt: timestampFromDate(now),
        lastEvidenceAt: timestampFromDate(now),
        evidenceCount: 1,
      }),
    ],
  });

  // Session open: the snapshot goes into the cached prompt prefix; keep its watermark.
  let watermark = 0n;
  for await (const event of memory.recall({ moment: Moment.SNAPSHOT, sessionId: "example-session", query: { currentScope: "veetbot" } }, { timeoutMs: 5000 })) {
    if (event.event.case === "result") watermark = event.event.value.snapshotWatermark;
  }

  // A turn: the block goes into the user turn, next to the goal.
  for await (const event of memory.recall(
    {
      moment: Moment.IN_TURN,
      sessionId: "example-session",
      turnId: "t-1",
      snapshotWatermark: watermark,
      query: { currentScope: "veetbot", text: "which editor does Andy use", subjects: ["Andy"] },
    },
    { timeoutMs: 5000 },
  )) {
    if (event.event.case === "arm") console.error(`arm ${event.event.value.arm}: ${event.event.value.latencyMs} ms`);
    if (event.event.case === "result") {
      const { rendered, traceId } = event.event.value;
      if (!rendered.includes("Andy's editor is Helix.")) throw new Error(`the belief is not in the block:\n${rendered}`);
      console.error(`trace ${traceId}`);
      return rendered;
    }
  }
  throw new Error("the recall stream ended without a result");
}

// Run directly: node …/recall-example.js [baseUrl]
if (import.meta.url === `file://${process.argv[1]}`) {
  runExample(process.argv[2] ?? "http://127.0.0.1:50051").then(
    (rendered) => process.stdout.write(rendered),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}

import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Config } from "../config/config.js";
import { createLogger } from "../log/logger.js";
import { startSidecar } from "../sidecar/start-sidecar.js";
import { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { Moment } from "../gen/memory/v1/types_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";
import { DEMO_PRINCIPAL, DEMO_TENANT, PERSONA_HELD_ID, demoBeliefs, demoEpisodes } from "./demo-memories.js";
import { untilSignalled } from "./serve.js";
import { INSPECTOR_SESSION, playInspectorSession } from "./demo-turns.js";
import { isLoopback } from "../config/edge-config.js";
import { resetDemoDataDir } from "./demo-reset.js";

/**
 * `recall demo`: the sidecar on the embedded store (always PGlite, whatever
 * RECALL_DATABASE_URL says), the demo memory loaded over gRPC, then a
 * session-open snapshot and an in-turn recall printed as an agent runtime
 * would receive them.
 *
 * Each start erases the demo principal and loads its memory again, so the
 * output is the README's whatever the last run changed (a rejection in the
 * inspector, the citations its session records): a change lasts until the
 * demo stops. `--reset` wipes the whole data directory first (demo-reset.ts).
 */
export async function runDemo(config: Config, options: { once: boolean; reset: boolean }): Promise<number> {
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  // The inspector page comes with the serving demo wherever it is safe without more setup (loopback, trusted headers).
  const ui = config.ui || (!options.once && config.identity.mode === "headers" && isLoopback(config.listen.host));
  const embedded: Config = {
    ...config,
    ui,
    store: config.store.kind === "pglite" ? config.store : { kind: "pglite", dataDir: "./.recall-data" },
  };
  const dataDir = embedded.store.kind === "pglite" ? embedded.store.dataDir : "?";
  if (options.reset) await resetDemoDataDir(embedded.store, { tenantId: DEMO_TENANT, principalId: DEMO_PRINCIPAL }, logger);
  const sidecar = await startSidecar(embedded, logger);
  const address = `http://${config.listen.host.includes(":") ? `[${config.listen.host}]` : config.listen.host}:${sidecar.port}`;
  try {
    const transport = createGrpcTransport({
      baseUrl: address,
      interceptors: [
        (next) => (req) => {
          req.header.set("x-tenant-id", DEMO_TENANT);
          req.header.set("x-principal-id", DEMO_PRINCIPAL);
          return next(req);
        },
      ],
    });
    const write = createClient(MemoryWriteService, transport);
    const read = createClient(MemoryService, transport);

    // A load, not an agent's turn: a deadline that a busy machine cannot miss (the default is 2 s).
    const loading = { timeoutMs: 30_000 };
    // The demo's memory as it ships, whatever an earlier run left (the principal's alone: the directory may hold others).
    await write.erasePrincipal({ tenantId: DEMO_TENANT, principalId: DEMO_PRINCIPAL }, loading);
    await write.putBeliefs({ beliefs: demoBeliefs() }, loading);
    await write.appendEpisodes({ episodes: demoEpisodes() }, loading);
    await write.setPersonaEntry({ beliefId: PERSONA_HELD_ID }, loading);
    // The index serves the recalls below, as it would a principal in use: a load in the background
    // would share the embedded store's one connection with their trace writes, or still run at --once's stop.
    await sidecar.loadIndex({ tenantId: DEMO_TENANT, principalId: DEMO_PRINCIPAL });

    const out = (s: string) => process.stdout.write(s);
    out(`recall demo: sidecar on ${address} (embedded store in ${dataDir})\n`);
    out(`principal ${DEMO_TENANT}/${DEMO_PRINCIPAL}, session in project "veetbot"; its memory is loaded afresh at each start\n\n`);

    const snapshot = await recallOnce(read, {
      moment: Moment.SNAPSHOT,
      sessionId: "demo-session-1",
      query: { currentScope: "veetbot" },
    });
    out("== session-open snapshot (cached prompt prefix) ==\n");
    out(snapshot.rendered);
    out(`trace ${snapshot.traceId}\n\n`);

    const inTurn = await recallOnce(read, {
      moment: Moment.IN_TURN,
      sessionId: "demo-session-1",
      turnId: "demo-turn-1",
      // The runtime's active entities for this turn: the deploy itself, and deploys in general.
      query: { currentScope: "veetbot", text: "How do we deploy veetbot, and what gates a deploy?", subjects: ["veetbot deploy", "deploys"] },
    });
    out("== in-turn recall for: \"How do we deploy veetbot, and what gates a deploy?\" ==\n");
    for (const arm of inTurn.arms) out(`arm ${arm}\n`);
    out(inTurn.rendered);
    out(`trace ${inTurn.traceId}\n\n`);

    if (options.once) return 0;
    if (sidecar.inspector) {
      await playInspectorSession(read, write);
      out(`memory inspector (open in a browser; the token in it is made for this start):\n`);
      out(`  ${sidecar.inspector.address({ tenantId: DEMO_TENANT, principalId: DEMO_PRINCIPAL })}\n`);
      out(`  Memory: what the agent believes about Andy · Turns: ${INSPECTOR_SESSION} → t-7, what it saw and why · Actions: make it stop believing something\n\n`);
    }
    out(`serving on ${address} with the demo memory; try:\n`);
    out(`  grpcurl -plaintext -H 'x-tenant-id: ${DEMO_TENANT}' -H 'x-principal-id: ${DEMO_PRINCIPAL}' \\\n`);
    out(`    -d '{"query":{"current_scope":"veetbot","text":"what editor does Andy use"}}' \\\n`);
    out(`    ${address.replace("http://", "")} memory.v1.MemoryService/Recall\n`);
    out("Ctrl-C to stop.\n");
    await untilSignalled(sidecar, logger);
    return 0;
  } finally {
    await sidecar.stop();
  }
}

async function recallOnce(
  client: Client<typeof MemoryService>,
  request: Parameters<Client<typeof MemoryService>["recall"]>[0],
): Promise<{ rendered: string; traceId: string; arms: string[] }> {
  const arms: string[] = [];
  for await (const event of client.recall(request, { timeoutMs: 5000 })) {
    if (event.event.case === "arm") {
      const a = event.event.value;
      arms.push(`${a.arm}: ${a.candidates.length} candidates in ${a.latencyMs} ms${a.degraded ? " (degraded)" : ""}`);
    } else if (event.event.case === "result") {
      return { rendered: event.event.value.rendered, traceId: event.event.value.traceId, arms };
    }
  }
  throw new Error("recall stream ended without a result");
}

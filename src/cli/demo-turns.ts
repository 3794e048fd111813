import type { Client } from "@connectrpc/connect";
import type { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { Moment } from "../gen/memory/v1/types_pb.js";
import type { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";

/**
 * The demo's second session, for the memory inspector: a snapshot and seven
 * turns t-1 … t-7, as an agent helping Andy with a veetbot release would
 * make them, with the model's citations in t-7. Its traces are deleted and
 * made again at each demo start, so the session reads the same every time.
 */

export const INSPECTOR_SESSION = "demo-session-2";

const TURNS: { turn: string; text: string; subjects: string[] }[] = [
  { turn: "t-1", text: "How does Andy like his writing?", subjects: ["Andy"] },
  { turn: "t-2", text: "Where does Andy work from, and when?", subjects: ["Andy"] },
  { turn: "t-3", text: "Which editor should the setup guide assume Andy uses?", subjects: ["Andy"] },
  { turn: "t-4", text: "What does veetbot store its memory in?", subjects: ["veetbot"] },
  { turn: "t-5", text: "Is the veetbot CLI moving to Rust?", subjects: ["Andy"] },
  { turn: "t-6", text: "Where is veetbot deployed?", subjects: ["veetbot deploy"] },
  { turn: "t-7", text: "Draft the release note for Andy: how do we deploy veetbot, and what gates a deploy?", subjects: ["veetbot deploy", "deploys"] },
];

/** What the model cited in t-7: the gate and Andy's writing preference. */
const CITED_IN_T7 = ["7ea51c2d-0000-4000-8000-000000000008", "8f21a0c3-0000-4000-8000-000000000001"];

export async function playInspectorSession(read: Client<typeof MemoryService>, write: Client<typeof MemoryWriteService>): Promise<void> {
  await write.deleteSessionTraces({ sessionId: INSPECTOR_SESSION }, { timeoutMs: 30_000 });
  const snapshot = await finalResult(read, { moment: Moment.SNAPSHOT, sessionId: INSPECTOR_SESSION, query: { currentScope: "veetbot" } });
  for (const t of TURNS) {
    const result = await finalResult(read, {
      moment: Moment.IN_TURN,
      sessionId: INSPECTOR_SESSION,
      turnId: t.turn,
      snapshotWatermark: snapshot.snapshotWatermark,
      query: { currentScope: "veetbot", text: t.text, subjects: t.subjects },
    });
    if (t.turn === "t-7") {
      const cited = CITED_IN_T7.filter((id) => result.items.some((i) => i.beliefId === id));
      const fromSnapshot = CITED_IN_T7.filter((id) => !cited.includes(id) && snapshot.items.some((i) => i.beliefId === id));
      if (cited.length > 0) await write.recordCitations({ traceId: result.traceId, beliefIds: cited });
      if (fromSnapshot.length > 0) await write.recordCitations({ traceId: snapshot.traceId, beliefIds: fromSnapshot, turnId: t.turn });
    }
  }
}

async function finalResult(read: Client<typeof MemoryService>, request: Parameters<Client<typeof MemoryService>["recall"]>[0]) {
  for await (const event of read.recall(request, { timeoutMs: 10_000 })) {
    if (event.event.case === "result") return event.event.value;
  }
  throw new Error("recall stream ended without a result");
}

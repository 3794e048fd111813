import { createRecallClient } from "@recall-memory/sidecar";
import { startLocalSidecar } from "@recall-memory/sidecar/testing";

const andy = { tenantId: "acme", principalId: "andy" };
const helix = { belief_id: "8f21a0c3-0000-4000-8000-000000000001", subject: "Andy", statement: "Andy's editor is Helix.",
  belief_type: "preference", status: "BELIEF_STATUS_ACTIVE", confidence: 0.9, authority: "AUTHORITY_USER",
  origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_USER", portability: "PORTABILITY_PORTABLE" };
const sidecar = await startLocalSidecar({ fixtures: [{ ...andy, records: [{ belief: helix }] }] }); // for tests and demos

const memory = createRecallClient({ address: sidecar.address, ...andy });  // in production: your sidecar's address
const session = await memory.openSession({ sessionId: "s-42", scope: "veetbot", goal: "draft the release notes" });
console.log(session.snapshot.rendered);      // once, into the cached system prompt; session.watermark is kept
const turn = await session.recallForTurn({ turnId: "t-7", text: "which editor does Andy use?", subjects: ["Andy"] });
console.log(turn.rendered);                  // into the user turn (correction lines first); may be empty
await memory.cite(turn.traceId, turn.result.items.map((item) => item.beliefId));  // the ids the model cited
await memory.reject({ beliefId: helix.belief_id, kind: "not_true" });             // the user says it is wrong
memory.close();
await sidecar.stop();

import { createRecallClient } from "@recall-memory/sidecar";
import { startLocalSidecar } from "@recall-memory/sidecar/testing";
const sidecar = await startLocalSidecar(); // for tests and demos; in production, your sidecar's address
const memory = createRecallClient({ address: sidecar.address, tenantId: "acme", principalId: "andy", scope: "veetbot" });
const vim = await memory.remember("Andy", "Andy's editor is Vim."); // user-stated, portable, active (the defaults)
const session = await memory.openSession({ scope: "veetbot" }); // its snapshot shows Vim
await memory.replace(vim.beliefId, "Andy's editor is Helix."); // a successor, superseding the old belief
console.log((await session.recallForTurn({ turnId: "t-1", text: "which editor does Andy use?" })).rendered);
memory.close(); await sidecar.stop();

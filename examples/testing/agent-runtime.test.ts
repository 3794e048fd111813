// A test an agent-runtime author can copy: a real recall sidecar per test file, seeded with
// fixtures, reset between tests, called through the SDK. Needs `recall` built (npm run build).
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startLocalSidecar, type LocalSidecar } from "@recall-memory/sidecar/testing";

const andy = { tenantId: "acme", principalId: "andy" };
const memories = [
  { belief: { belief_id: "8f21a0c3-5b1e-4c2a-9f00-000000000001", subject: "Andy", statement: "Andy prefers concise, prose-first writing.",
      belief_type: "preference", status: "BELIEF_STATUS_ACTIVE", confidence: 0.9, authority: "AUTHORITY_USER",
      origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_USER", portability: "PORTABILITY_PORTABLE" } },
];

let sidecar: LocalSidecar;
beforeAll(async () => {
  sidecar = await startLocalSidecar({ fixtures: [{ ...andy, records: memories }] });
});
afterEach(() => sidecar.reset()); // every test starts from the fixtures again
afterAll(() => sidecar.stop());

// Your runtime's turn loop would do this: snapshot into the cached prefix, then recall per turn.
it("puts Andy's writing preference into the session prefix", async () => {
  const session = await sidecar.client.openSession({ scope: "veetbot", goal: "draft the release notes" });
  expect(session.snapshot.rendered).toContain("[m:8f21a0c3] Andy prefers concise, prose-first writing.");

  const turn = await session.recallForTurn({ turnId: "t-1", text: "what writing style does Andy prefer?", subjects: ["Andy"] });
  expect(turn.degraded).toBe(false);
  const used = turn.result.items.map((i) => i.beliefId);
  expect(used).toEqual(["8f21a0c3-5b1e-4c2a-9f00-000000000001"]);
  // The ids the model cited in its answer.
  expect((await sidecar.client.cite(turn.traceId, used)).recorded).toBe(1);
});

it("forgets what the user rejects", async () => {
  await sidecar.client.reject({ beliefId: "8f21a0c3-5b1e-4c2a-9f00-000000000001", kind: "not_true" });
  const session = await sidecar.client.openSession({ scope: "veetbot" });
  expect(session.snapshot.items).toEqual([]);
});

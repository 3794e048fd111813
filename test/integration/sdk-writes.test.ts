import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, RecallError, citedIds, createRecallClient, type BeliefJson, type RecallClient } from "../../src/sdk/index.js";
import { beliefMsg } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The SDK's write helpers against a real sidecar process over real gRPC, on
 * both stores: remember with its defaults, replace (succession), retract,
 * markConflict, episodes, batches in either shape, every bad field in one
 * INVALID_ARGUMENT with nothing written, and short ids that collide.
 */

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The snake_case shape of the fixtures and import files (protobuf JSON; grpc-js's proto-loader shape). */
const HELIX_JSON = beliefMsg({ belief_id: "8f21a0c3-0000-4000-8000-000000000001", statement: "Andy's editor is Helix." }) as BeliefJson & {
  belief_id: string;
};

async function failure(promise: Promise<unknown>): Promise<RecallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RecallError);
  return error as RecallError;
}

describe.each(["pglite", "postgres"] as const)("SDK write helpers (%s)", (kind) => {
  let sidecar: SidecarProcess;
  const clients: RecallClient[] = [];
  /** A client of a principal of its own, so tests never see each other's memories. */
  const client = (principalId: string) => {
    const c = createRecallClient({ address: sidecar.address, tenantId: "acme", principalId, scope: "veetbot" });
    clients.push(c);
    return c;
  };
  const search = async (c: RecallClient, text: string) => (await c.search(text, { subjects: ["Andy"] })).result!;

  beforeAll(async () => {
    sidecar = await startSidecarProcess(kind);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("remembers with the documented defaults and a random UUID v4", async () => {
    const andy = client("remember");
    const { beliefId, written, warnings } = await andy.remember("Andy", "Andy prefers concise answers.");
    expect(beliefId).toMatch(UUID_V4);
    expect(written).toBe(1);
    expect(warnings).toEqual([]);
    const { belief } = await andy.raw.inspect.getBelief({ beliefId });
    expect(belief?.belief).toMatchObject({
      subject: "Andy",
      beliefType: "preference",
      status: 1, // active
      confidence: 0.9,
      authority: 1, // user
      originScope: "veetbot",
      scopeLevel: 2, // user
      portability: 1, // portable
      sensitivity: 2, // personal
    });
    const found = await search(andy, "concise answers");
    expect(found.rendered).toContain(`[m:${beliefId.slice(0, 8)}] Andy prefers concise answers.  (user-stated, high)`);
  });

  it("replaces a belief: the successor inherits its subject and kind, and recall shows only the correction", async () => {
    const andy = client("replace");
    const vim = await andy.remember("Andy", "Andy's editor is Vim.", { beliefType: "user_model_attr", predicateKey: "editor" });
    const helix = await andy.replace(vim.beliefId, "Andy's editor is Helix.");
    expect(helix.replaced).toBe(vim.beliefId);
    const { belief } = await andy.raw.inspect.getBelief({ beliefId: helix.beliefId });
    expect(belief?.belief).toMatchObject({ subject: "Andy", beliefType: "user_model_attr", predicateKey: "editor", supersedes: [vim.beliefId] });
    const found = await search(andy, "which editor does Andy use");
    expect(found.items.map((i) => i.beliefId)).toEqual([helix.beliefId]);
    expect(found.rendered).toContain("Andy's editor is Helix.");
    expect(found.rendered).not.toContain("Vim");
    // Replacing what does not exist says so.
    expect((await failure(andy.replace("00000000-0000-4000-8000-000000000000", "x"))).code).toBe(Code.NotFound);
  });

  it("retracts a belief out of live recall, and a repeat writes nothing", async () => {
    const andy = client("retract");
    const tea = await andy.remember("Andy", "Andy drinks green tea every morning.");
    expect((await search(andy, "green tea")).items).toHaveLength(1);
    expect((await andy.retract(tea.beliefId)).written).toBe(1);
    expect((await search(andy, "green tea")).items).toEqual([]);
    expect((await andy.retract(tea.beliefId)).written).toBe(0);
  });

  it("marks two beliefs in conflict: both are shown, each naming the other", async () => {
    const andy = client("conflict");
    const fly = await andy.remember("veetbot", "veetbot deploys to Fly.io.", { beliefType: "project_fact", authority: "inferred", confidence: 0.6 });
    const k8s = await andy.remember("veetbot", "veetbot deploys to Kubernetes.", { beliefType: "project_fact", authority: "inferred", confidence: 0.6 });
    expect((await andy.markConflict(fly.beliefId, k8s.beliefId)).written).toBe(1);
    expect((await andy.markConflict(fly.beliefId, k8s.beliefId)).written).toBe(0);
    const rendered = (await andy.search("where does veetbot deploy", { subjects: ["veetbot"] })).result!.rendered;
    expect(rendered).toContain(`conflicts=[m:${k8s.beliefId.slice(0, 8)}]`);
    expect(rendered).toContain(`conflicts=[m:${fly.beliefId.slice(0, 8)}]`);
  });

  it("appends episodes in order, with generated ids, and a repeat appends nothing", async () => {
    const andy = client("episodes");
    const turn = [
      { sessionId: "s-1", actor: "user", content: "I moved to Lisbon." },
      { session_id: "s-1", actor: "agent", content: "Noted: you live in Lisbon now." },
    ];
    const { episodeIds, appended } = await andy.appendEpisodes(turn);
    expect(appended).toBe(2);
    expect(episodeIds.every((id) => UUID_V4.test(id))).toBe(true);
    const page = await andy.recallEpisodes({ sessionId: "s-1" });
    expect(page.episodes.map((e) => e.episodeId)).toEqual(episodeIds);
    expect(page.episodes.map((e) => e.project)).toEqual(["veetbot", "veetbot"]);
    const again = await andy.appendEpisodes(turn.map((e, i) => ({ ...e, episodeId: episodeIds[i] })));
    expect(again.appended).toBe(0);
  });

  it("writes a batch in either shape, the snake_case fixture shape included, through the helper and the raw client", async () => {
    const andy = client("batch");
    const many = await andy.rememberMany([HELIX_JSON, { subject: "Andy", statement: "Andy keeps European hours.", scopeLevel: "user" }]);
    expect(many.beliefIds[0]).toBe(HELIX_JSON.belief_id);
    expect(many.written).toBe(2);
    // The raw client takes the same shape instead of failing INTERNAL in its encoder: an identical re-write.
    const raw = await andy.raw.write.putBeliefs({ beliefs: [HELIX_JSON as never] });
    expect(raw.written).toBe(0);
    const { belief } = await andy.raw.inspect.getBelief({ beliefId: HELIX_JSON.belief_id });
    expect(belief?.belief?.statement).toBe("Andy's editor is Helix.");
  });

  it("rejects as changed with a correction in the fixture shape", async () => {
    const andy = client("reject-changed");
    const vim = await andy.remember("Andy", "Andy's editor is Vim.");
    await andy.reject({ beliefId: vim.beliefId, kind: "changed", correction: HELIX_JSON });
    expect((await search(andy, "which editor does Andy use")).items.map((i) => i.beliefId)).toEqual([HELIX_JSON.belief_id]);
    const bad = await failure(andy.reject({ beliefId: vim.beliefId, kind: "changed", correction: { ...HELIX_JSON, authority: "boss" } }));
    expect([bad.code, bad.message]).toEqual([Code.InvalidArgument, "correction.authority: must be one of user, affirmed, inferred"]);
  });

  it("refuses what cannot be encoded with every field named, before sending", async () => {
    const andy = client("bad-shape");
    const bad = { ...HELIX_JSON, status: "activ", confidence: "high", scope_level: 7, colour: "blue" };
    const error = await failure(andy.rememberMany([bad as never]));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.message).toBe(
      "beliefs[0].status: must be one of active, provisional, superseded, expired; beliefs[0].confidence: must be a number; " +
        "beliefs[0].scope_level: must be one of project, user, global; beliefs[0].colour: is not a field of Belief",
    );
    const raw = await failure(andy.raw.write.putBeliefs({ beliefs: [{ ...HELIX_JSON, status: "nope" } as never] }));
    expect(raw.code).toBe(Code.InvalidArgument);
    expect(raw.message).toContain("beliefs[0].status: must be one of");
  });

  it("reports every missing or bad field of a batch in one INVALID_ARGUMENT from the sidecar, and writes none of it", async () => {
    const andy = client("bad-fields");
    const error = await failure(
      andy.rememberMany([
        { subject: "Andy", statement: "Andy likes rain." },
        { beliefId: "not-a-uuid", subject: " ", statement: "", confidence: 2 },
      ]),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.message).toBe(
      "beliefs[1].belief_id: must be a UUID; beliefs[1].subject: is required; beliefs[1].statement: is required; " +
        "beliefs[1].confidence: must be between 0 and 1",
    );
    expect((await search(andy, "rain")).items).toEqual([]);
  });

  it("tells beliefs apart whose ids share eight hex digits: a warning on write, longer ids in the block, citations by either", async () => {
    const andy = client("short-ids");
    const first = await andy.remember("Andy", "Andy's cat is called Miso.", { beliefId: "aaaaaaaa-0000-4000-8000-000000000001" });
    expect(first.warnings).toEqual([]);
    const second = await andy.remember("Andy", "Andy's dog is called Pico.", { beliefId: "aaaaaaaa-b000-4000-8000-000000000002" });
    expect(second.warnings).toEqual([
      `beliefs[0].belief_id: shares its first eight hex digits (aaaaaaaa) with ${first.beliefId}; ` +
        "a block showing both cites them by longer ids (random UUID v4 ids avoid this)",
    ]);
    const found = await andy.search("what are Andy's cat and dog called");
    expect(found.result!.rendered).toContain("[m:aaaaaaaa0] Andy's cat is called Miso.");
    expect(found.result!.rendered).toContain("[m:aaaaaaaab] Andy's dog is called Pico.");

    const answer = "Your dog is Pico [m:aaaaaaaab].";
    expect(citedIds(answer, found.result!)).toEqual([second.beliefId]);
    expect((await andy.cite(found.result!.traceId, ["m:aaaaaaaa0"])).recorded).toBe(1);
    expect((await andy.cite(found.result!.traceId, citedIds(answer, found.result!))).recorded).toBe(1);
    const trace = await andy.raw.memory.getTrace({ traceId: found.result!.traceId });
    expect([...trace.trace!.cited].sort()).toEqual([first.beliefId, second.beliefId]);
    const ambiguous = await failure(andy.cite(found.result!.traceId, ["m:aaaaaaaa"]));
    expect(ambiguous.code).toBe(Code.InvalidArgument);
    expect(ambiguous.message).toBe("belief_ids[0]: names 2 beliefs of this trace: cite the id as its block shows it");
  });
});

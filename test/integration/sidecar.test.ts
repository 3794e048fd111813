import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity, ts } from "../support/grpc-fixtures.js";
import { PGBOUNCER_MISSING, SIDECAR_KINDS } from "../support/pgbouncer.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The sidecar as a real process, called over real gRPC by @grpc/grpc-js,
 * on both stores, and on PostgreSQL through PgBouncer in transaction mode.
 * Every RPC is exercised, including health and reflection.
 */
describe.each(SIDECAR_KINDS)("sidecar over gRPC (%s)", (kind) => {
  let sidecar: SidecarProcess;
  let c: Clients;

  beforeAll(async () => {
    sidecar = await startSidecarProcess(kind);
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const recall = (identity: Json, request: Json) => serverStream(c.memory, "Recall", request, identity);
  const resultOf = (events: Json[]) => events[events.length - 1]!.result as Json;

  it("reports SERVING through grpc.health.v1 Check and Watch", async () => {
    expect((await unary(c.health, "Check", { service: "" }, {})).status).toBe("SERVING");
    expect((await unary(c.health, "Check", { service: "memory.v1.MemoryService" }, {})).status).toBe("SERVING");
    const missing = await failure(unary(c.health, "Check", { service: "nope.Service" }, {}));
    expect(missing.code).toBe(grpc.status.NOT_FOUND);
    const first = await new Promise<Json>((resolve, reject) => {
      const call = c.health.Watch({ service: "" });
      call.once("data", (m: Json) => {
        call.cancel();
        resolve(m);
      });
      call.once("error", (e: grpc.ServiceError) => (e.code === grpc.status.CANCELLED ? undefined : reject(e)));
    });
    expect(first.status).toBe("SERVING");
  });

  it.each(["reflectionV1", "reflectionV1alpha"] as const)("lists services through %s", async (which) => {
    const response = await new Promise<Json>((resolve, reject) => {
      const call = c[which].ServerReflectionInfo();
      call.once("data", (m: Json) => {
        call.end();
        resolve(m);
      });
      call.once("error", reject);
      call.write({ host: "", list_services: "*" });
    });
    const names = (response.list_services_response.service as Json[]).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["memory.v1.MemoryService", "memory.v1.MemoryWriteService", "grpc.health.v1.Health"]));
  });

  it("streams one event per arm, then exactly one final result", async () => {
    const me = newIdentity();
    const pref = beliefMsg({ statement: "Andy prefers tea over coffee in the morning.", subject: "Andy" });
    const fact = beliefMsg({ subject: "billing service", statement: "The billing service is written in Go.", belief_type: "project_fact", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" });
    const put = await unary(c.write, "PutBeliefs", { beliefs: [pref, fact] }, me);
    expect(put.written).toBe(2);
    expect(put.store_position).toBe("1");

    const events = await recall(me, { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "what language is the billing service in?", subjects: ["billing service"] } });
    const arms = events.slice(0, -1);
    expect(arms.map((e) => e.event)).toEqual(["arm", "arm"]);
    expect(arms.map((e) => e.arm.arm).sort()).toEqual(["lexical", "structured"]);
    for (const e of arms) {
      expect(e.arm.degraded).toBe(false);
      expect(e.arm.candidates[0]).toEqual({ belief_id: fact.belief_id, rank: 1 });
    }
    expect(events[events.length - 1]!.event).toBe("result");
    const result = resultOf(events);
    expect(result.items[0].belief_id).toBe(fact.belief_id);
    expect(result.rendered).toContain(`[m:${fact.belief_id.replace(/-/g, "").slice(0, 8)}] The billing service is written in Go.`);
    expect(result.rendered).toMatch(/^<memory as_of="[0-9T:-]+Z" policy="retrieval@6">\n/);
    expect(result.arms_degraded).toEqual([]);
  });

  it("says when the tenant or principal holds no memory at all: no_memory, no as_of, one info line", async () => {
    const nobody = newIdentity();
    for (const request of [
      { moment: "MOMENT_SNAPSHOT", query: { current_scope: "veetbot" } },
      { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "what editor does Andy use" } },
    ]) {
      const result = resultOf(await recall(nobody, request));
      expect(result.no_memory).toBe(true);
      expect(result.items).toEqual([]);
      // Never a 1970 stamp: nothing pins the block of a principal never written.
      expect(result.as_of).toBeNull();
      expect(result.rendered).toBe('<memory policy="retrieval@6">\n</memory>\n');
      const { trace } = await unary(c.memory, "GetTrace", { trace_id: result.trace_id }, nobody);
      expect(trace.as_of).toBeNull();
    }
    // A query's own as_of still pins the header.
    const dated = resultOf(await recall(nobody, { moment: "MOMENT_IN_TURN", query: { text: "editor", as_of: ts("2026-03-01T00:00:00Z") } }));
    expect(dated.no_memory).toBe(true);
    expect(dated.rendered).toMatch(/^<memory as_of="2026-03-01T00:00:00Z" policy="retrieval@6">\n/);
    await expect.poll(() => sidecar.logs().split("\n").filter((l) => l.includes(nobody.principal) && l.includes("principal with no memory")).length).toBe(3);
    const line = JSON.parse(sidecar.logs().split("\n").find((l) => l.includes(nobody.principal) && l.includes("principal with no memory"))!);
    expect(line).toMatchObject({ level: 30, tenant: nobody.tenant, principal: nobody.principal });

    // One belief later the same principal has memory: the flag goes, the header is its write's time.
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy's editor is Helix.", subject: "Andy" })] }, nobody);
    const written = resultOf(await recall(nobody, { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "what editor does Andy use" } }));
    expect(written.no_memory).toBe(false);
    expect(written.rendered).toMatch(/^<memory as_of="[0-9T:-]+Z" policy="retrieval@6">\n/);
    expect(written.rendered).not.toContain("1970");
  });

  it("forms the query from the working state: entities as subjects, objective and message as intent", async () => {
    const me = newIdentity();
    const fact = beliefMsg({ subject: "billing service", statement: "The billing service is written in Go.", belief_type: "project_fact" });
    const marta = beliefMsg({ subject: "Marta", statement: "Marta reviews every schema migration.", belief_type: "relationship" });
    await unary(c.write, "PutBeliefs", { beliefs: [fact, marta] }, me);
    const events = await recall(me, {
      moment: "MOMENT_IN_TURN",
      query: { current_scope: "veetbot" },
      working_state: {
        objective: "Move billing to PostgreSQL 16",
        open_questions: ["Who must approve the migration?"],
        active_entities: ["billing service"],
        current_message: "let's start",
      },
    });
    const result = resultOf(events);
    expect(result.items.map((i: Json) => i.belief_id).sort()).toEqual([fact.belief_id, marta.belief_id].sort());
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: result.trace_id }, me);
    expect(trace.query.subjects).toEqual(["billing service"]);
    expect(trace.query.text).toBe("let's start\nWho must approve the migration?\nMove billing to PostgreSQL 16");
  });

  it("renders the same bytes for the same belief set, and GetTrace binds the trace to them", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg(), beliefMsg({ statement: "Andy works from Berlin.", belief_type: "user_model_attr" })] }, me);
    const request = { moment: "MOMENT_SNAPSHOT", session_id: "s-1", query: { current_scope: "veetbot" } };
    const a = resultOf(await recall(me, request));
    const b = resultOf(await recall(me, request));
    expect(a.items).toHaveLength(2);
    expect(b.rendered).toBe(a.rendered);
    expect(b.trace_id).not.toBe(a.trace_id);

    const { trace } = await unary(c.memory, "GetTrace", { trace_id: a.trace_id }, me);
    expect(trace.id).toBe(a.trace_id);
    expect(trace.moment).toBe("MOMENT_SNAPSHOT");
    expect(trace.session_id).toBe("s-1");
    expect(trace.rendered_sha256).toBe(createHash("sha256").update(a.rendered, "utf8").digest("hex"));
    expect(trace.returned).toEqual(a.items.map((i: Json) => i.belief_id));
    // The snapshot moment never includes provisional beliefs, and the trace records the effective query.
    expect(trace.query.include_provisional).toBe(false);
    expect(trace.query.profile).toBe("PROFILE_CORE");
    expect(trace.retrieval_policy_version).toBe("retrieval@6");
  });

  it("answers Search on the recall path", async () => {
    const me = newIdentity();
    const b = beliefMsg({ statement: "Andy's dog is called Pixel.", belief_type: "relationship" });
    await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
    const { result } = await unary(c.memory, "Search", { text: "what is the dog called", scope: "veetbot" }, me);
    expect(result.items.map((i: Json) => i.belief_id)).toEqual([b.belief_id]);
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: result.trace_id }, me);
    expect(trace.returned).toEqual([b.belief_id]);
  });

  it("pages RecallEpisodes in order, without deduplication, and hides archival episodes unless asked", async () => {
    const me = newIdentity();
    const episodes = [3, 1, 2].map((n) => episodeMsg({ session_id: "sess", sequence: String(n), content: "same words" }));
    const archival = episodeMsg({ session_id: "sess", sequence: "9", archival: true, content: "old" });
    const appended = await unary(c.write, "AppendEpisodes", { episodes: [...episodes, archival] }, me);
    expect(appended.appended).toBe(4);
    const page1 = await unary(c.memory, "RecallEpisodes", { session_id: "sess", page_size: 2 }, me);
    expect(page1.episodes.map((e: Json) => e.sequence)).toEqual(["1", "2"]);
    expect(page1.next_page_token).not.toBe("");
    const page2 = await unary(c.memory, "RecallEpisodes", { session_id: "sess", page_size: 2, page_token: page1.next_page_token }, me);
    expect(page2.episodes.map((e: Json) => e.sequence)).toEqual(["3"]);
    expect(page2.next_page_token).toBe("");
    const all = await unary(c.memory, "RecallEpisodes", { session_id: "sess", include_archival: true }, me);
    expect(all.episodes.map((e: Json) => e.sequence)).toEqual(["1", "2", "3", "9"]);
  });

  it("requires identity metadata and refuses a body naming another tenant or principal", async () => {
    const me = newIdentity();
    const noTenant = await failure(unary(c.memory, "Search", { text: "x" }, { principal: "p" }));
    expect(noTenant.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(noTenant.details).toContain("x-tenant-id");
    const noPrincipal = await failure(unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, { tenant: "t" }));
    expect(noPrincipal.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(noPrincipal.details).toContain("x-principal-id");
    const otherTenant = await failure(recall(me, { query: { tenant_id: "someone-else", text: "x" } }));
    expect(otherTenant.code).toBe(grpc.status.PERMISSION_DENIED);
    const otherPrincipal = await failure(recall(me, { query: { principal_id: "someone-else", text: "x" } }));
    expect(otherPrincipal.code).toBe(grpc.status.PERMISSION_DENIED);
    const same = await recall(me, { query: { tenant_id: me.tenant, principal_id: me.principal, text: "x" } });
    expect(resultOf(same).items).toEqual([]);
  });

  it("returns zero rows of another tenant or principal on every RPC", async () => {
    const owner = newIdentity("owner");
    const samePrincipalOtherTenant = { tenant: `${owner.tenant}-x`, principal: owner.principal };
    const otherPrincipalSameTenant = { tenant: owner.tenant, principal: `${owner.principal}-x` };
    const secret = beliefMsg({ subject: "Zanzibar", statement: "Zanzibar project codename is Heron.", belief_type: "project_fact" });
    await unary(c.write, "PutBeliefs", { beliefs: [secret] }, owner);
    await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: "zsess", content: "Zanzibar Heron" })] }, owner);
    await unary(c.write, "PutSubjectAliases", { aliases: [{ alias: "Zed", subject: "Zanzibar" }] }, owner);
    const ownResult = resultOf(await recall(owner, { query: { text: "Zanzibar codename Heron", subjects: ["Zed"] } }));
    expect(ownResult.items.map((i: Json) => i.belief_id)).toEqual([secret.belief_id]);

    for (const intruder of [samePrincipalOtherTenant, otherPrincipalSameTenant]) {
      const r = resultOf(await recall(intruder, { query: { text: "Zanzibar codename Heron", subjects: ["Zanzibar", "Zed"] } }));
      expect(r.items).toEqual([]);
      expect(r.rendered).not.toContain("Heron");
      const snapshot = resultOf(await recall(intruder, { moment: "MOMENT_SNAPSHOT", query: {} }));
      expect(snapshot.items).toEqual([]);
      const s = await unary(c.memory, "Search", { text: "Zanzibar Heron", subjects: ["Zanzibar"] }, intruder);
      expect(s.result.items).toEqual([]);
      const e = await unary(c.memory, "RecallEpisodes", { session_id: "zsess", include_archival: true }, intruder);
      expect(e.episodes).toEqual([]);
      const trace = await failure(unary(c.memory, "GetTrace", { trace_id: ownResult.trace_id }, intruder));
      expect(trace.code).toBe(grpc.status.NOT_FOUND);
      const missing = await failure(unary(c.memory, "GetTrace", { trace_id: randomUUID() }, intruder));
      expect(missing).toEqual(trace);
      const cite = await failure(unary(c.write, "RecordCitations", { trace_id: ownResult.trace_id, belief_ids: [secret.belief_id] }, intruder));
      expect(cite.code).toBe(grpc.status.NOT_FOUND);
      const persona = await failure(unary(c.write, "SetPersonaEntry", { belief_id: secret.belief_id }, intruder));
      expect(persona.code).toBe(grpc.status.NOT_FOUND);
      const reject = await failure(unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: secret.belief_id, kind: "REJECTION_KIND_NOT_TRUE" }, intruder));
      expect(reject.code).toBe(grpc.status.NOT_FOUND);
      const removed = await unary(c.write, "RemovePersonaEntry", { belief_id: secret.belief_id }, intruder);
      expect(removed.removed).toBe(false);
    }
    // The owner's memory is untouched by all of that.
    const after = resultOf(await recall(owner, { query: { text: "Zanzibar codename Heron" } }));
    expect(after.items.map((i: Json) => i.belief_id)).toEqual([secret.belief_id]);
  });

  it("makes writes idempotent by id and feeds citations back", async () => {
    const me = newIdentity();
    const b = beliefMsg({ statement: "Andy reads on a Kobo e-reader.", belief_type: "user_model_attr" });
    const first = await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
    const again = await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
    expect(again).toEqual({ written: 0, store_position: first.store_position, warnings: [] });
    const r = resultOf(await recall(me, { query: { text: "Kobo e-reader" } }));
    const cited = await unary(c.write, "RecordCitations", { trace_id: r.trace_id, belief_ids: [b.belief_id] }, me);
    expect(cited.recorded).toBe(1);
    expect((await unary(c.write, "RecordCitations", { trace_id: r.trace_id, belief_ids: [b.belief_id] }, me)).recorded).toBe(0);
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: r.trace_id }, me);
    expect(trace.cited).toEqual([b.belief_id]);
  });

  it("applies persona entries, aliases and typed rejections", async () => {
    const me = newIdentity();
    const held = beliefMsg({ statement: "Andy is the maintainer of veetbot.", belief_type: "user_model_attr" });
    const wrong = beliefMsg({ statement: "Andy lives in Madrid.", belief_type: "user_model_attr", predicate_key: "home" });
    await unary(c.write, "PutBeliefs", { beliefs: [held, wrong] }, me);
    await unary(c.write, "SetPersonaEntry", { belief_id: held.belief_id }, me);
    const snap = resultOf(await recall(me, { moment: "MOMENT_SNAPSHOT", query: { current_scope: "veetbot" } }));
    expect(snap.items.map((i: Json) => i.belief_id)).toEqual([wrong.belief_id]);
    const inTurn = resultOf(await recall(me, { query: { text: "who maintains veetbot" } }));
    expect(inTurn.items.map((i: Json) => i.belief_id)).toContain(held.belief_id);

    const correction = beliefMsg({ statement: "Andy lives in Berlin.", belief_type: "user_model_attr", predicate_key: "home" });
    await unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: wrong.belief_id, kind: "REJECTION_KIND_CHANGED", correction }, me);
    // A re-derivation re-emits the old belief as active: the rejection is replayed.
    await unary(c.write, "PutBeliefs", { beliefs: [wrong] }, me);
    const now = resultOf(await recall(me, { query: { text: "where does Andy live" } }));
    const ids = now.items.map((i: Json) => i.belief_id);
    expect(ids).toContain(correction.belief_id);
    expect(ids).not.toContain(wrong.belief_id);
    expect(now.rendered).not.toContain("Madrid");
  });

  describe("rejects bad input with INVALID_ARGUMENT naming the field and writes nothing", () => {
    const cases: [string, string, (id: string) => Json, string][] = [
      ["PutBeliefs", "confidence out of range", () => ({ beliefs: [beliefMsg(), beliefMsg({ confidence: 1.5 })] }), "beliefs[1].confidence"],
      ["PutBeliefs", "bad id", () => ({ beliefs: [beliefMsg({ belief_id: "nope" })] }), "beliefs[0].belief_id"],
      ["PutBeliefs", "missing status", () => ({ beliefs: [beliefMsg({ status: "BELIEF_STATUS_UNSPECIFIED" })] }), "beliefs[0].status"],
      ["PutBeliefs", "empty", () => ({ beliefs: [] }), "beliefs"],
      ["AppendEpisodes", "missing time", () => ({ episodes: [episodeMsg(), episodeMsg({ occurred_at: null })] }), "episodes[1].occurred_at"],
      ["SetPersonaEntry", "bad id", () => ({ belief_id: "x" }), "belief_id"],
      ["RemovePersonaEntry", "missing id", () => ({ belief_id: "" }), "belief_id"],
      ["PutSubjectAliases", "empty alias", () => ({ aliases: [{ alias: "", subject: "Acme Corp" }] }), "aliases[0].alias"],
      ["RecordCitations", "bad trace id", () => ({ trace_id: "t", belief_ids: [randomUUID()] }), "trace_id"],
      ["RejectBelief", "changed without correction", (id) => ({ rejection_id: randomUUID(), belief_id: id, kind: "REJECTION_KIND_CHANGED" }), "correction"],
      ["RejectBelief", "bad correction", (id) => ({ rejection_id: randomUUID(), belief_id: id, kind: "REJECTION_KIND_CHANGED", correction: beliefMsg({ statement: "" }) }), "correction.statement"],
    ];
    it.each(cases)("%s (%s)", async (method, _label, build, field) => {
      const me = newIdentity();
      const existing = beliefMsg({ statement: "Untouched belief about kites." });
      const base = await unary(c.write, "PutBeliefs", { beliefs: [existing] }, me);
      const err = await failure(unary(c.write, method, build(existing.belief_id), me));
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details.startsWith(`${field}:`)).toBe(true);
      // Nothing moved: same head, same single belief, no episodes.
      const again = await unary(c.write, "PutBeliefs", { beliefs: [existing] }, me);
      expect(again.store_position).toBe(base.store_position);
      const r = resultOf(await recall(me, { moment: "MOMENT_SNAPSHOT", query: {} }));
      expect(r.items.map((i: Json) => i.belief_id)).toEqual([existing.belief_id]);
      const e = await unary(c.memory, "RecallEpisodes", { session_id: "s1", include_archival: true }, me);
      expect(e.episodes).toEqual([]);
    });

    it("names the field for bad read requests too", async () => {
      const me = newIdentity();
      const e1 = await failure(unary(c.memory, "Search", { text: "" }, me));
      expect([e1.code, e1.details]).toEqual([grpc.status.INVALID_ARGUMENT, "text: is required"]);
      const e2 = await failure(recall(me, {}));
      expect([e2.code, e2.details]).toEqual([grpc.status.INVALID_ARGUMENT, "query: is required"]);
      const e3 = await failure(unary(c.memory, "RecallEpisodes", {}, me));
      expect(e3.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(e3.details).toMatch(/^session_id:/);
      const e4 = await failure(unary(c.memory, "GetTrace", { trace_id: "abc" }, me));
      expect([e4.code, e4.details]).toEqual([grpc.status.INVALID_ARGUMENT, "trace_id: must be a UUID"]);
      const e5 = await failure(unary(c.memory, "RecallEpisodes", { session_id: "s", page_token: "garbage" }, me));
      expect(e5.details).toMatch(/^page_token:/);
      const e6 = await failure(recall(me, { query: { as_of: ts("2026-01-01T00:00:00Z"), max_items: -1 } }));
      expect(e6.details).toMatch(/^query\.max_items:/);
    });
  });
});

describe.skipIf(PGBOUNCER_MISSING === undefined)("sidecar over gRPC (pgbouncer)", () => {
  it.skip(PGBOUNCER_MISSING ?? "", () => {});
});

import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { failure, grpc, metadata, serverStream, unary, type Json } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity, ts } from "../support/grpc-fixtures.js";
import { useSidecar } from "../support/local-sidecar.js";

/**
 * Deliberate lookup (Search, the memory.search@2.1.0 tool), historical
 * queries, the escalation signal and the episodic path (RecallEpisodes), over
 * real gRPC (@grpc/grpc-js) and Connect JSON (fetch), on both stores.
 */

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const iso = (t: Json | null | undefined) => (t ? new Date(Number(t.seconds) * 1000 + Math.round((t.nanos ?? 0) / 1e6)).toISOString() : null);
const ids = (items: Json[]) => items.map((i) => i.belief_id);

/** protobuf wire bytes of a length-delimited field (field numbers < 16, payloads < 128 bytes). */
function lengthDelimited(field: number, text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  if (field >= 16 || payload.length >= 128) throw new Error("keep the hand-made encoding simple");
  return Buffer.concat([Buffer.from([(field << 3) | 2, payload.length]), payload]);
}

describe.each(["pglite", "postgres"] as const)("search, history and episodes over gRPC (%s)", (kind) => {
  const { sidecar, c } = useSidecar(kind);

  const search = (identity: Json, request: Json, extra: Record<string, string> = {}) =>
    new Promise<Json>((resolve, reject) => {
      const md = metadata(identity);
      for (const [k, v] of Object.entries(extra)) md.set(k, v);
      c.memory.Search(request, md, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: Json) => (err ? reject(err) : resolve(res)));
    });
  const recall = async (identity: Json, request: Json) => {
    const events = await serverStream(c.memory, "Recall", request, identity);
    return events[events.length - 1]!.result as Json;
  };
  /** Search with hand-encoded request bytes, as a client generated from another schema would send them. */
  const rawSearch = (identity: Json, bytes: Buffer) =>
    new Promise<Buffer>((resolve, reject) => {
      c.memory.makeUnaryRequest(
        "/memory.v1.MemoryService/Search",
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        metadata(identity),
        { deadline: Date.now() + 10_000 },
        (err: grpc.ServiceError | null, res?: Buffer) => (err ? reject(err) : resolve(res!)),
      );
    });
  const trace = async (identity: Json, traceId: string) => (await unary(c.memory, "GetTrace", { trace_id: traceId }, identity)).trace as Json;
  const connectJson = (identity: Json, method: string, body: Json) =>
    fetch(`http://${sidecar.address}/memory.v1.MemoryService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": identity.tenant, "x-principal-id": identity.principal },
      body: JSON.stringify(body),
    });

  describe("Search (memory.search@2.1.0)", () => {
    it("uses type_hints as relevance anchors, never as a storage-type filter, and finds persona-held beliefs", async () => {
      const me = newIdentity();
      const coffee = beliefMsg({ statement: "Andy takes his coffee black.", belief_type: "preference" });
      const city = beliefMsg({ statement: "Andy works from Berlin.", belief_type: "user_model_attr" });
      const sister = beliefMsg({ statement: "Andy's sister is called Mia.", belief_type: "relationship" });
      await unary(c.write, "PutBeliefs", { beliefs: [coffee, city, sister] }, me);
      await unary(c.write, "SetPersonaEntry", { belief_id: sister.belief_id }, me);

      const { result } = await search(me, { text: "coffee", type_hints: ["user_model_attr"], scope: "veetbot" });
      // The preference matches the words and is not of the hinted type: a hint is not a filter.
      expect(ids(result.items)).toContain(coffee.belief_id);
      // The hinted type is anchored although it shares no word with the question.
      expect(ids(result.items)).toContain(city.belief_id);
      const t = await trace(me, result.trace_id);
      expect(t.tool).toBe("memory.search@2.1.0");
      expect(t.moment).toBe("MOMENT_IN_TURN");
      expect(t.query.structured_belief_types).toEqual(["user_model_attr"]);
      expect(t.query.belief_types).toEqual([]);
      expect(t.rendered_sha256).toBe(sha256(result.rendered));

      // Persona-held: out of the snapshot, never out of a direct search.
      const found = await search(me, { text: "what is Andy's sister called", scope: "veetbot" });
      expect(ids(found.result.items)[0]).toBe(sister.belief_id);
      const snapshot = await recall(me, { moment: "MOMENT_SNAPSHOT", query: { current_scope: "veetbot" } });
      expect(ids(snapshot.items)).not.toContain(sister.belief_id);
    });

    it("refuses the old belief_types argument: gRPC binary (reserved field 12) and Connect JSON", async () => {
      const me = newIdentity();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy drinks tea." })] }, me);
      // A client generated from the old schema: text = 1, belief_types = 12.
      const oldClientRequest = Buffer.concat([lengthDelimited(1, "tea"), lengthDelimited(12, "preference")]);
      const binary = await failure(rawSearch(me, oldClientRequest));
      expect(binary.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(binary.details).toBe("belief_types: is not an argument of memory.search@2.1.0; use type_hints (relevance anchors, not a filter)");
      // The same bytes without field 12 are fine: only the old argument is refused.
      const ok = await rawSearch(me, lengthDelimited(1, "tea"));
      expect(ok.length).toBeGreaterThan(0);

      for (const key of ["belief_types", "beliefTypes"]) {
        const res = await connectJson(me, "Search", { text: "tea", [key]: ["preference"] });
        expect(res.status).toBe(400);
        const body = (await res.json()) as Json;
        expect(body.code).toBe("invalid_argument");
        expect(body.message).toContain(`"${key}"`);
      }
      const good = await connectJson(me, "Search", { text: "tea", typeHints: ["preference"] });
      expect(good.status).toBe(200);
      expect(((await good.json()) as Json).result.items).toHaveLength(1);
    });

    it("keeps RecallQuery.belief_types as an AND filter on the internal path", async () => {
      const me = newIdentity();
      const pref = beliefMsg({ statement: "Andy likes kites.", belief_type: "preference" });
      const fact = beliefMsg({ statement: "Andy flies kites on Sundays.", belief_type: "habit" });
      await unary(c.write, "PutBeliefs", { beliefs: [pref, fact] }, me);
      const both = await recall(me, { query: { text: "kites" } });
      expect(ids(both.items).sort()).toEqual([pref.belief_id, fact.belief_id].sort());
      const filtered = await recall(me, { query: { text: "kites", belief_types: ["habit"] } });
      expect(ids(filtered.items)).toEqual([fact.belief_id]);
    });

    it("resolves an omitted scope from the session, the same way every time, and takes an explicit scope for cross-project lookup", async () => {
      const me = newIdentity();
      const staging = beliefMsg({ subject: "Staging DB", statement: "Staging DB is at 10.0.0.5.", belief_type: "endpoint", origin_scope: "atlas", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_LOCAL" });
      const gate = beliefMsg({ subject: "Deploys", statement: "Deploys are gated on CI passing.", belief_type: "decision", origin_scope: "atlas", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" });
      await unary(c.write, "PutBeliefs", { beliefs: [staging, gate] }, me);
      const question = { text: "staging address and deploy gates" };

      const byHeader = await search(me, question, { "x-session-scope": "atlas" });
      expect([byHeader.resolved_scope, byHeader.scope_source]).toEqual(["atlas", "SCOPE_SOURCE_SESSION_HEADER"]);
      expect(ids(byHeader.result.items).sort()).toEqual([staging.belief_id, gate.belief_id].sort());
      expect(byHeader.result.rendered).not.toContain("(learned in");

      // A session that opened with a snapshot in atlas: same scope, same answer, without the header.
      const session = `s-${randomUUID()}`;
      await recall(me, { moment: "MOMENT_SNAPSHOT", session_id: session, query: { current_scope: "atlas" } });
      const bySnapshot = await search(me, { ...question, session_id: session });
      expect([bySnapshot.resolved_scope, bySnapshot.scope_source]).toEqual(["atlas", "SCOPE_SOURCE_SESSION_SNAPSHOT"]);
      expect(bySnapshot.result.rendered.split("\n").slice(1)).toEqual(byHeader.result.rendered.split("\n").slice(1));
      const t = await trace(me, bySnapshot.result.trace_id);
      expect([t.query.current_scope, t.query.scope_source, t.session_id]).toEqual(["atlas", "session_snapshot", session]);

      // From another project the local endpoint stays home; the contextual decision carries, attributed.
      const fromVeetbot = await search(me, question, { "x-session-scope": "veetbot" });
      expect(ids(fromVeetbot.result.items)).toEqual([gate.belief_id]);
      expect(fromVeetbot.result.rendered).toContain("(learned in atlas) Deploys are gated on CI passing.");
      // An explicit scope is an intentional cross-project lookup and wins over the session's.
      const explicit = await search(me, { ...question, scope: "atlas" }, { "x-session-scope": "veetbot" });
      expect([explicit.resolved_scope, explicit.scope_source]).toEqual(["atlas", "SCOPE_SOURCE_REQUEST"]);
      expect(ids(explicit.result.items).sort()).toEqual([staging.belief_id, gate.belief_id].sort());
      // Nothing names a scope: none.
      const none = await search(me, question);
      expect([none.resolved_scope, none.scope_source]).toEqual(["", "SCOPE_SOURCE_NONE"]);
    });

    it("finds ownership statements for keyword queries naming the user or owner", async () => {
      const me = newIdentity();
      const car = beliefMsg({ subject: "User", statement: "User has a 2026 Aster S8.", belief_type: "user_model_attr" });
      const drives = beliefMsg({ subject: "User", statement: "The user drives it to Leipzig on Fridays.", belief_type: "user_model_attr" });
      const notOwned = beliefMsg({ subject: "User", statement: "User does not have a bike.", belief_type: "user_model_attr" });
      const noise = Array.from({ length: 5 }, (_, i) => beliefMsg({ subject: "User", statement: `User prefers theme number ${i}.`, belief_type: "preference" }));
      await unary(c.write, "PutBeliefs", { beliefs: [car, drives, notOwned, ...noise] }, me);

      const { result } = await search(me, { text: "owner vehicle", scope: "veetbot" });
      expect(ids(result.items).sort()).toEqual([car.belief_id, drives.belief_id].sort());
      expect(result.rendered.split("\n")[0]).toMatch(/policy="retrieval@6\+owned-resources@1">$/);
      expect((await trace(me, result.trace_id)).query.include_owned_resources).toBe(true);
      expect((await search(me, { text: "user car model" })).result.items.map((i: Json) => i.belief_id)).toContain(car.belief_id);
      // Without the user or owner named, the lookup is off and nothing shares a word with the question.
      const plain = await search(me, { text: "vehicle" });
      expect(plain.result.items).toEqual([]);
      expect(plain.result.rendered).toMatch(/policy="retrieval@6">/);
    });
  });

  describe("historical queries (as_of, known_at, both)", () => {
    /** Madrid recorded in January; on May 1st we learned of the move to Berlin on March 1st. */
    async function learnedLate(me: Json) {
      const home = { subject: "Andy", belief_type: "user_model_attr", predicate_key: "home_city" };
      const madridAsBelieved = beliefMsg({ ...home, statement: "Andy lives in Madrid.", status: "BELIEF_STATUS_SUPERSEDED", valid_from: ts("2026-01-01T00:00:00Z"), recorded_at: ts("2026-01-02T00:00:00Z"), retracted_at: ts("2026-05-01T00:00:00Z") });
      const madridClosed = beliefMsg({ ...home, statement: "Andy lived in Madrid.", status: "BELIEF_STATUS_SUPERSEDED", valid_from: ts("2026-01-01T00:00:00Z"), valid_to: ts("2026-03-01T00:00:00Z"), recorded_at: ts("2026-05-01T00:00:00Z") });
      const berlin = beliefMsg({ ...home, statement: "Andy lives in Berlin.", valid_from: ts("2026-03-01T00:00:00Z"), recorded_at: ts("2026-05-01T00:00:00Z"), supersedes: [madridAsBelieved.belief_id, madridClosed.belief_id] });
      await unary(c.write, "PutBeliefs", { beliefs: [madridAsBelieved, madridClosed, berlin] }, me);
    }
    const statements = (r: Json) => r.items.map((i: Json) => i.statement);
    const ask = { text: "where does Andy live", subjects: ["Andy"], scope: "veetbot" };

    it("as_of returns what held then; known_at what was recorded by then; both combine; both are in the result and the block", async () => {
      const me = newIdentity();
      await learnedLate(me);
      expect(statements((await search(me, ask)).result)).toEqual(["Andy lives in Berlin."]);

      const feb = (await search(me, { ...ask, as_of: ts("2026-02-01T00:00:00Z") })).result;
      expect(statements(feb)).toEqual(["Andy lived in Madrid."]);
      expect(feb.items[0].status).toBe("BELIEF_STATUS_SUPERSEDED");
      expect(feb.rendered.split("\n")[0]).toBe('<memory as_of="2026-02-01T00:00:00Z" policy="retrieval@6">');
      expect([iso(feb.as_of), feb.known_at]).toEqual(["2026-02-01T00:00:00.000Z", null]);

      const april = (await search(me, { ...ask, as_of: ts("2026-04-01T00:00:00Z") })).result;
      expect(statements(april)).toEqual(["Andy lives in Berlin."]);

      const aprilAsBelieved = (await search(me, { ...ask, as_of: ts("2026-04-01T00:00:00Z"), known_at: ts("2026-04-01T00:00:00Z") })).result;
      expect(statements(aprilAsBelieved)).toEqual(["Andy lives in Madrid."]);
      expect(aprilAsBelieved.rendered.split("\n")[0]).toBe('<memory as_of="2026-04-01T00:00:00Z" known_at="2026-04-01T00:00:00Z" policy="retrieval@6">');
      expect([iso(aprilAsBelieved.as_of), iso(aprilAsBelieved.known_at)]).toEqual(["2026-04-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z"]);

      const knownInApril = (await search(me, { ...ask, known_at: ts("2026-04-01T00:00:00Z") })).result;
      expect(statements(knownInApril)).toEqual(["Andy lives in Madrid."]);
      expect(knownInApril.rendered.split("\n")[0]).toMatch(/ known_at="2026-04-01T00:00:00Z" policy="retrieval@6">$/);

      // Recall takes the same coordinates and the trace keeps them.
      const recalled = await recall(me, { query: { text: ask.text, subjects: ask.subjects, as_of: ts("2026-04-01T00:00:00Z"), known_at: ts("2026-04-01T00:00:00Z") } });
      expect(recalled.rendered).toBe(aprilAsBelieved.rendered);
      const t = await trace(me, recalled.trace_id);
      expect([iso(t.query.as_of), iso(t.query.known_at), iso(t.as_of)]).toEqual([
        "2026-04-01T00:00:00.000Z",
        "2026-04-01T00:00:00.000Z",
        "2026-04-01T00:00:00.000Z",
      ]);
    });
  });

  describe("the escalation signal", () => {
    it("advises episodic search for an event question, with the range it names, and never runs it", async () => {
      const me = newIdentity();
      const session = `s-${randomUUID()}`;
      const decision = episodeMsg({ session_id: session, occurred_at: ts("2026-07-21T10:00:00Z"), kind: "decision", content: "We decided to ship the importer on Friday." });
      await unary(c.write, "AppendEpisodes", { episodes: [decision] }, me);
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy prefers shipping on Fridays." })] }, me);

      // Asked on Friday 2026-07-24 (the query's as_of is the reference for "Tuesday").
      const result = await recall(me, { moment: "MOMENT_IN_TURN", session_id: session, query: { text: "What did we decide on Tuesday?", as_of: ts("2026-07-24T15:00:00Z") } });
      expect(result.episodic_search_advised).toBe(true);
      expect(result.escalation_reason).toBe("ESCALATION_REASON_EVENT_QUERY");
      expect([iso(result.suggested_episode_scope.start_time), iso(result.suggested_episode_scope.end_time)]).toEqual([
        "2026-07-21T00:00:00.000Z",
        "2026-07-22T00:00:00.000Z",
      ]);
      // Advice only: no episode reached the block.
      expect(result.rendered).not.toContain("importer");
      const t = await trace(me, result.trace_id);
      expect([t.episodic_search_advised, t.escalation_reason, t.tool, t.returned_episodes]).toEqual([true, "ESCALATION_REASON_EVENT_QUERY", "", []]);

      // The agent follows the advice with RecallEpisodes.
      const scope = result.suggested_episode_scope;
      const page = await unary(c.memory, "RecallEpisodes", { start_time: scope.start_time, end_time: scope.end_time }, me);
      expect(page.episodes.map((e: Json) => e.episode_id)).toEqual([decision.episode_id]);
      expect(page.rendered).toContain("We decided to ship the importer on Friday.");
    });

    it("advises it for a named subject with no belief above the floor, in the current session; not when an alias answers", async () => {
      const me = newIdentity();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Acme Corp", statement: "Acme Corp pays on net-30 terms.", belief_type: "project_fact" })] }, me);
      await unary(c.write, "PutSubjectAliases", { aliases: [{ alias: "Acme", subject: "Acme Corp" }] }, me);

      const missing = await recall(me, { session_id: "s-7", query: { text: "how is Zanzibar going", subjects: ["Zanzibar"] } });
      expect(missing.items).toEqual([]);
      expect(missing.episodic_search_advised).toBe(true);
      expect(missing.escalation_reason).toBe("ESCALATION_REASON_SUBJECT_NOT_FOUND");
      expect(missing.suggested_episode_scope).toMatchObject({ session_id: "s-7", subjects: ["Zanzibar"], start_time: null, end_time: null });

      const viaAlias = await recall(me, { session_id: "s-7", query: { text: "payment terms", subjects: ["Acme"] } });
      expect(viaAlias.items).toHaveLength(1);
      expect(viaAlias.episodic_search_advised).toBe(false);
      expect(viaAlias.suggested_episode_scope).toBeNull();

      // Search carries the same signal; a snapshot never does.
      expect((await search(me, { text: "Zanzibar", subjects: ["Zanzibar"], session_id: "s-7" })).result.episodic_search_advised).toBe(true);
      const snapshot = await recall(me, { moment: "MOMENT_SNAPSHOT", session_id: "s-7", query: { subjects: ["Zanzibar"] } });
      expect(snapshot.episodic_search_advised).toBe(false);
    });
  });

  describe("RecallEpisodes (memory.recall_episodes)", () => {
    it("is traced like a recall: GetTrace binds the page's rendered bytes, the query and the episode ids", async () => {
      const me = newIdentity();
      const session = `s-${randomUUID()}`;
      const events = [1, 2, 3].map((n) => episodeMsg({ session_id: session, sequence: String(n), content: `Step ${n} done.` }));
      await unary(c.write, "AppendEpisodes", { episodes: events }, me);
      const page = await unary(c.memory, "RecallEpisodes", { session_id: session, turn_id: "t-3", surface: { surface_id: "cli" } }, me);
      expect(page.episodes.map((e: Json) => e.episode_id)).toEqual(events.map((e) => e.episode_id));
      expect(page.rendered.split("\n")[0]).toBe(`<episodes session="${session}" policy="episodes@1">`);
      const t = await trace(me, page.trace_id);
      expect(t).toMatchObject({
        id: page.trace_id,
        moment: "MOMENT_IN_TURN",
        tool: "memory.recall_episodes@1",
        session_id: session,
        turn_id: "t-3",
        surface_id: "cli",
        retrieval_policy_version: "episodes@1",
        returned: [],
        returned_episodes: events.map((e) => e.episode_id),
        rendered_sha256: sha256(page.rendered),
      });
      expect(t.episode_query).toMatchObject({ session_id: session, include_archival: false, page_size: 50, budget_tokens: 4000, archival_budget_tokens: 1500, continued: false });
    });

    it("reads archival episodes only when asked, under their own smaller budget, and pages on without gaps", async () => {
      const me = newIdentity();
      const session = `s-${randomUUID()}`;
      const live = episodeMsg({ session_id: session, sequence: "0", content: "Kick-off." });
      const archival = Array.from({ length: 6 }, (_, i) =>
        episodeMsg({ session_id: session, sequence: String(i + 1), archival: true, content: `Archived note ${i} ${"with many filler words ".repeat(4)}` }),
      );
      await unary(c.write, "AppendEpisodes", { episodes: [live, ...archival] }, me);

      const liveOnly = await unary(c.memory, "RecallEpisodes", { session_id: session }, me);
      expect(liveOnly.episodes.map((e: Json) => e.episode_id)).toEqual([live.episode_id]);

      const seen: string[] = [];
      let token = "";
      for (let pages = 0; pages < 10; pages++) {
        const page = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true, archival_budget_tokens: 64, page_token: token }, me);
        const archivalLines = page.rendered.split("\n").filter((l: string) => / archival /.test(l));
        expect(archivalLines.length).toBeLessThanOrEqual(2);
        seen.push(...page.episodes.map((e: Json) => e.episode_id));
        token = page.next_page_token;
        if (token === "") break;
        expect(page.truncated).toBe(true);
      }
      expect(seen).toEqual([live, ...archival].map((e) => e.episode_id));

      // A token belongs to its query.
      const first = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true, archival_budget_tokens: 64 }, me);
      const reused = await failure(unary(c.memory, "RecallEpisodes", { session_id: session, page_token: first.next_page_token }, me));
      expect(reused.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(reused.details).toMatch(/^page_token: belongs to a different query/);
      const tooSmall = await failure(unary(c.memory, "RecallEpisodes", { session_id: session, budget_tokens: 10 }, me));
      expect(tooSmall.details).toBe("budget_tokens: must be 0 (the default) or at least 64");
    });

    it("withholds a credential in the event log, keeping the episode's place", async () => {
      const me = newIdentity();
      const session = `s-${randomUUID()}`;
      const leaked = episodeMsg({ session_id: session, sequence: "1", content: "here is the key ghp_abcdefghijklmnopqrstuvwxyz0123456789AB" });
      const after = episodeMsg({ session_id: session, sequence: "2", content: "Thanks, rotated it." });
      await unary(c.write, "AppendEpisodes", { episodes: [leaked, after] }, me);
      const page = await unary(c.memory, "RecallEpisodes", { session_id: session }, me);
      expect(page.episodes.map((e: Json) => [e.episode_id, e.content])).toEqual([
        [leaked.episode_id, ""],
        [after.episode_id, "Thanks, rotated it."],
      ]);
      expect(page.withheld_episode_ids).toEqual([leaked.episode_id]);
      expect(page.rendered).not.toContain("ghp_");
      expect(page.rendered).toContain("[BLOCKED] withheld: contains a credential.");
      expect((await trace(me, page.trace_id)).blocked).toEqual([leaked.episode_id]);
    });
  });

  describe("isolation", () => {
    it("gives another tenant or principal zero rows from Search and RecallEpisodes, and none of their traces", async () => {
      const owner = newIdentity("owner");
      const session = `s-${randomUUID()}`;
      const secret = beliefMsg({ subject: "Zanzibar", statement: "Zanzibar launches with codename Heron.", belief_type: "project_fact", origin_scope: "atlas" });
      const carLine = beliefMsg({ subject: "User", statement: "User has a 2026 Aster S8.", belief_type: "user_model_attr" });
      await unary(c.write, "PutBeliefs", { beliefs: [secret, carLine] }, owner);
      await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: session, content: "Heron is the codename." }), episodeMsg({ session_id: session, archival: true, content: "Old Heron notes." })] }, owner);
      await recall(owner, { moment: "MOMENT_SNAPSHOT", session_id: session, query: { current_scope: "atlas" } });

      const own = await search(owner, { text: "Zanzibar codename Heron", subjects: ["Zanzibar"], session_id: session });
      expect(own.resolved_scope).toBe("atlas");
      expect(ids(own.result.items)).toEqual([secret.belief_id]);
      const ownOwner = await search(owner, { text: "owner vehicle" });
      expect(ids(ownOwner.result.items)).toEqual([carLine.belief_id]);
      const ownEpisodes = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true }, owner);
      expect(ownEpisodes.episodes).toHaveLength(2);
      const ownHistory = await search(owner, { text: "Zanzibar codename", as_of: ts("2026-06-01T00:00:00Z"), known_at: ts("2026-11-01T00:00:00Z") });
      expect(ids(ownHistory.result.items)).toEqual([secret.belief_id]);

      const intruders = [
        { tenant: `${owner.tenant}-x`, principal: owner.principal },
        { tenant: owner.tenant, principal: `${owner.principal}-x` },
      ];
      for (const intruder of intruders) {
        const s = await search(intruder, { text: "Zanzibar codename Heron", subjects: ["Zanzibar"], session_id: session, surface: { sensitivity_ceiling: "SENSITIVITY_RESTRICTED" } });
        expect(s.result.items).toEqual([]);
        expect(s.result.rendered).not.toContain("Heron");
        // The owner's session scope is not readable either.
        expect([s.resolved_scope, s.scope_source]).toEqual(["", "SCOPE_SOURCE_NONE"]);
        expect((await search(intruder, { text: "owner vehicle" })).result.items).toEqual([]);
        const h = await search(intruder, { text: "Zanzibar codename", as_of: ts("2026-06-01T00:00:00Z"), known_at: ts("2026-11-01T00:00:00Z") });
        expect(h.result.items).toEqual([]);

        const e = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true }, intruder);
        expect(e.episodes).toEqual([]);
        expect(e.rendered).not.toContain("Heron");
        const byTime = await unary(c.memory, "RecallEpisodes", { start_time: ts("2000-01-01T00:00:00Z"), include_archival: true }, intruder);
        expect(byTime.episodes).toEqual([]);
        // Their own episode trace records zero episodes.
        expect((await trace(intruder, e.trace_id)).returned_episodes).toEqual([]);

        for (const traceId of [own.result.trace_id, ownEpisodes.trace_id]) {
          const denied = await failure(unary(c.memory, "GetTrace", { trace_id: traceId }, intruder));
          expect([denied.code, denied.details]).toEqual([grpc.status.NOT_FOUND, "trace not found"]);
        }
        // A page token of the owner's reads nothing of the owner's.
        const stolen = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true, page_size: 1 }, owner);
        const replay = await unary(c.memory, "RecallEpisodes", { session_id: session, include_archival: true, page_token: stolen.next_page_token }, intruder);
        expect(replay.episodes).toEqual([]);
      }
    });
  });
});

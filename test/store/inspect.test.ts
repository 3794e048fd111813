import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SENSITIVITY, type Principal } from "../../src/domain/model.js";
import type { BeliefFilter, Cursor } from "../../src/store/inspect-store.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, episode, newPrincipal } from "../support/fixtures.js";
import { recallTrace, useStore } from "./store-helpers.js";

const JAN = new Date("2026-01-01T00:00:00Z");
const FEB = new Date("2026-02-01T00:00:00Z");
const MAR = new Date("2026-03-01T00:00:00Z");

/** No filter, every sensitivity: the operator's whole view. */
function filter(overrides: Partial<BeliefFilter> = {}): BeliefFilter {
  return {
    ceiling: SENSITIVITY.restricted,
    statuses: [],
    beliefTypes: [],
    originScopes: [],
    sensitivities: [],
    authorities: [],
    subject: null,
    asOf: null,
    knownAt: null,
    ...overrides,
  };
}

/** The inspection API's reads (InspectService): paged, filtered, bounded by the viewing ceiling, one principal's rows only. */
describe.each(STORE_KINDS)("inspection reads ($kind)", ({ open }) => {
  const store = useStore(open);
  const inspect = () => store().inspect;

  async function listAll(p: Principal, f: BeliefFilter, pageSize: number): Promise<string[][]> {
    const pages: string[][] = [];
    let after: Cursor | null = null;
    do {
      const page = await inspect().listBeliefs(p, f, after, pageSize);
      pages.push(page.beliefs.map((b) => b.belief.beliefId));
      after = page.next;
    } while (after && pages.length < 20);
    return pages;
  }

  it("pages newest recorded first, with a total, and never repeats or skips a row", async () => {
    const p = newPrincipal();
    const bs = [JAN, FEB, MAR, MAR].map((at) => belief({ recordedAt: at, validFrom: at, lastEvidenceAt: at }));
    await store().putBeliefs(p, bs);
    const pages = await listAll(p, filter(), 3);
    expect(pages.map((page) => page.length)).toEqual([3, 1]);
    const [mar1, mar2] = [bs[2]!.beliefId, bs[3]!.beliefId].sort().reverse();
    expect(pages.flat()).toEqual([mar1, mar2, bs[1]!.beliefId, bs[0]!.beliefId]);
    expect((await inspect().listBeliefs(p, filter(), null, 3)).total).toBe(4);
  });

  it("filters by status, type, origin, sensitivity, authority and subject; the ceiling bounds all of it", async () => {
    const p = newPrincipal();
    const a = belief({ beliefType: "preference", authority: "user", originScope: "veetbot", sensitivity: SENSITIVITY.personal });
    const b = belief({ subject: "Billing", beliefType: "project_fact", authority: "inferred", originScope: "billing", sensitivity: SENSITIVITY.public });
    const c = belief({ status: "provisional", sensitivity: SENSITIVITY.confidential });
    await store().putBeliefs(p, [a, b, c]);
    const ids = async (f: Partial<BeliefFilter>) => (await inspect().listBeliefs(p, filter(f), null, 50)).beliefs.map((x) => x.belief.beliefId).sort();
    expect(await ids({ statuses: ["provisional"] })).toEqual([c.beliefId]);
    expect(await ids({ beliefTypes: ["project_fact"] })).toEqual([b.beliefId]);
    expect(await ids({ originScopes: ["billing"] })).toEqual([b.beliefId]);
    expect(await ids({ sensitivities: [SENSITIVITY.public] })).toEqual([b.beliefId]);
    expect(await ids({ authorities: ["inferred"] })).toEqual([b.beliefId]);
    expect(await ids({ subject: "billing" })).toEqual([b.beliefId]);
    expect(await ids({ ceiling: SENSITIVITY.personal })).toEqual([a.beliefId, b.beliefId].sort());
    expect((await inspect().listBeliefs(p, filter({ ceiling: SENSITIVITY.public }), null, 50)).total).toBe(1);
    const summary = await inspect().summary(p, SENSITIVITY.personal);
    expect(summary).toEqual({ beliefsByStatus: { active: 2 }, beliefsAboveCeiling: 1, sessions: 0 });
  });

  it("as_of shows what held then (a successor in force hides the old row); known_at what was on record then", async () => {
    const p = newPrincipal();
    const old = belief({ statement: "Andy lives in Berlin.", validFrom: JAN, recordedAt: JAN, lastEvidenceAt: JAN });
    const next = belief({ statement: "Andy lives in Lisbon.", validFrom: MAR, recordedAt: MAR, lastEvidenceAt: MAR, supersedes: [old.beliefId] });
    await store().putBeliefs(p, [old, next]);
    const ids = async (f: Partial<BeliefFilter>) => (await inspect().listBeliefs(p, filter(f), null, 50)).beliefs.map((x) => x.belief.beliefId);
    expect(await ids({ asOf: FEB })).toEqual([old.beliefId]);
    expect(await ids({ asOf: new Date("2026-04-01T00:00:00Z") })).toEqual([next.beliefId]);
    expect(await ids({ knownAt: FEB })).toEqual([old.beliefId]);
    // In April, as known in February: the successor was not on record yet.
    expect(await ids({ asOf: new Date("2026-04-01T00:00:00Z"), knownAt: FEB })).toEqual([old.beliefId]);
  });

  it("a belief a successor in force replaces is superseded now, though its row still says active, as recall judges it", async () => {
    const p = newPrincipal();
    const old = belief({ statement: "Andy lives in Berlin.", validFrom: JAN, recordedAt: JAN, lastEvidenceAt: JAN });
    const next = belief({ statement: "Andy lives in Lisbon.", validFrom: MAR, recordedAt: MAR, lastEvidenceAt: MAR, supersedes: [old.beliefId] });
    // A successor not yet begun replaces nothing yet.
    const later = belief({ statement: "Andy will work from Porto.", subject: "Andy's office", validFrom: new Date("2099-01-01T00:00:00Z") });
    const office = belief({ statement: "Andy works from the Lisbon office.", subject: "Andy's office", validFrom: JAN, recordedAt: JAN });
    await store().putBeliefs(p, [old, next, office, { ...later, supersedes: [office.beliefId] }]);
    const current = await inspect().listBeliefs(p, filter({ statuses: ["active", "provisional"] }), null, 50);
    expect(current.beliefs.map((x) => x.belief.beliefId).sort()).toEqual([next.beliefId, office.beliefId, later.beliefId].sort());
    const replaced = await inspect().listBeliefs(p, filter({ statuses: ["superseded"] }), null, 50);
    expect(replaced.beliefs.map((x) => [x.belief.beliefId, x.belief.status, x.statusNow])).toEqual([[old.beliefId, "active", "superseded"]]);
    expect((await inspect().belief(p, old.beliefId, SENSITIVITY.restricted))!.belief.statusNow).toBe("superseded");
    expect((await inspect().summary(p, SENSITIVITY.restricted)).beliefsByStatus).toEqual({ active: 3, superseded: 1 });
  });

  it("a belief comes with what it replaced, what replaced it, its conflicts, rejections, sources and citations", async () => {
    const p = newPrincipal();
    const source = episode({ content: "I moved to Lisbon." });
    const old = belief({ statement: "Andy lives in Berlin." });
    const mid = belief({ statement: "Andy lives in Lisbon.", supersedes: [old.beliefId], sourceEpisodeIds: [source.episodeId] });
    const next = belief({ statement: "Andy lives in Porto.", supersedes: [mid.beliefId] });
    const rival = belief({ statement: "Andy lives in Madrid.", conflictsWith: [mid.beliefId] });
    const secret = belief({ statement: "Andy's lease ends soon.", sensitivity: SENSITIVITY.restricted, conflictsWith: [mid.beliefId] });
    await store().appendEpisodes(p, [source]);
    await store().putBeliefs(p, [old, mid, next, rival, secret]);
    await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: mid.beliefId, kind: "unspecified", correction: null, scope: "", reason: "odd" });
    const detail = await inspect().belief(p, mid.beliefId, SENSITIVITY.confidential);
    expect(detail).not.toBeNull();
    expect(detail!.belief.belief.statement).toBe("Andy lives in Lisbon.");
    expect(detail!.belief.supersededBy).toEqual([next.beliefId]);
    expect(detail!.belief.rejections).toBe(1);
    expect(detail!.predecessors.map((b) => b.belief.beliefId)).toEqual([old.beliefId]);
    expect(detail!.successors.map((b) => b.belief.beliefId)).toEqual([next.beliefId]);
    expect(detail!.conflicts.map((b) => b.belief.beliefId)).toEqual([rival.beliefId]);
    // The restricted partner is counted, never named.
    expect(detail!.linkedAboveCeiling).toBe(1);
    expect(JSON.stringify(detail)).not.toContain(secret.beliefId);
    expect(detail!.rejections).toMatchObject([{ kind: "unspecified", reason: "odd" }]);
    expect(detail!.sourceEpisodes.map((e) => e.content)).toEqual(["I moved to Lisbon."]);
    expect(detail!.citations).toBe(0);
    // Above the ceiling, the belief itself is not found.
    expect(await inspect().belief(p, secret.beliefId, SENSITIVITY.confidential)).toBeNull();
  });

  it("lists sessions, most recent first, and their turns in order with their traces", async () => {
    const p = newPrincipal();
    const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 10, m));
    await store().recordTrace(p, recallTrace({ sessionId: "s-1", turnId: "", moment: "snapshot", createdAt: at(0) }));
    await store().recordTrace(p, recallTrace({ sessionId: "s-1", turnId: "t-1", createdAt: at(1) }));
    const t2 = recallTrace({ sessionId: "s-1", turnId: "t-2", createdAt: at(2) });
    await store().recordTrace(p, { ...t2, query: { ...t2.query, currentScope: "atlas" } });
    await store().recordTrace(p, recallTrace({ sessionId: "s-2", turnId: "t-9", createdAt: at(5) }));
    const first = await inspect().sessions(p, null, 1);
    expect(first.sessions.map((s) => s.sessionId)).toEqual(["s-2"]);
    const second = await inspect().sessions(p, first.next, 1);
    // The session's project is its latest recall's: a recall "as in this session" runs with it.
    expect(second.sessions).toMatchObject([{ sessionId: "s-1", turns: 2, traces: 3, currentScope: "atlas" }]);
    expect(second.next).toBeNull();
    const turns = await inspect().turns(p, "s-1", null, 2);
    expect(turns.turns.map((t) => t.turnId)).toEqual(["", "t-1"]);
    expect(turns.turns[0]!.traces).toMatchObject([{ moment: "snapshot" }]);
    expect(turns.turns[1]!.traces[0]).toMatchObject({ queryText: "how should I write?", moment: "in_turn" });
    const rest = await inspect().turns(p, "s-1", turns.next, 2);
    expect(rest.turns.map((t) => t.turnId)).toEqual(["t-2"]);
    expect(rest.next).toBeNull();
  });

  it("never returns another principal's or tenant's rows, on any path, even with the same ids", async () => {
    const me = newPrincipal("me");
    const neighbour = { tenantId: me.tenantId, principalId: `${me.principalId}-other` };
    const stranger = { tenantId: `${me.tenantId}-other`, principalId: me.principalId };
    const source = episode({ sessionId: "s-1" });
    const old = belief({ statement: "shared old" });
    const mine = belief({ statement: "shared", supersedes: [old.beliefId], sourceEpisodeIds: [source.episodeId] });
    const rival = belief({ statement: "rival", conflictsWith: [mine.beliefId] });
    // The others hold the same ids with their own text, and extra links to mine.
    for (const other of [neighbour, stranger]) {
      const tag = `${other.tenantId}/${other.principalId}`;
      await store().appendEpisodes(other, [{ ...source, content: `episode of ${tag}` }]);
      await store().putBeliefs(other, [
        { ...old, statement: `old of ${tag}` },
        { ...mine, statement: `belief of ${tag}` },
        { ...rival, statement: `rival of ${tag}` },
        belief({ statement: `successor of ${tag}`, supersedes: [mine.beliefId] }),
      ]);
      await store().rejectBelief(other, { rejectionId: randomUUID(), beliefId: mine.beliefId, kind: "unspecified", correction: null, scope: "", reason: tag });
      await store().recordTrace(other, recallTrace({ sessionId: "s-1", turnId: `turn of ${tag}`, returned: [mine.beliefId] }));
      await store().recordTrace(other, recallTrace({ sessionId: `session of ${tag}` }));
    }
    const lonely = newPrincipal("lonely");
    expect((await inspect().listBeliefs(lonely, filter(), null, 50)).total).toBe(0);
    expect(await inspect().belief(lonely, mine.beliefId, SENSITIVITY.restricted)).toBeNull();
    expect((await inspect().sessions(lonely, null, 50)).sessions).toEqual([]);
    expect((await inspect().turns(lonely, "s-1", null, 50)).turns).toEqual([]);
    expect(await inspect().summary(lonely, SENSITIVITY.restricted)).toEqual({ beliefsByStatus: {}, beliefsAboveCeiling: 0, sessions: 0 });

    await store().appendEpisodes(me, [{ ...source, content: "my episode" }]);
    await store().putBeliefs(me, [old, mine, rival]);
    await store().recordTrace(me, recallTrace({ sessionId: "s-1", turnId: "my turn" }));
    const everything = JSON.stringify([
      await inspect().listBeliefs(me, filter(), null, 50),
      await inspect().belief(me, mine.beliefId, SENSITIVITY.restricted),
      await inspect().belief(me, old.beliefId, SENSITIVITY.restricted),
      await inspect().sessions(me, null, 50),
      await inspect().turns(me, "s-1", null, 50),
      await inspect().summary(me, SENSITIVITY.restricted),
    ]);
    for (const other of [neighbour, stranger]) expect(everything).not.toContain(`${other.tenantId}/${other.principalId}`);
    const detail = await inspect().belief(me, mine.beliefId, SENSITIVITY.restricted);
    expect(detail!.successors).toEqual([]);
    expect(detail!.rejections).toEqual([]);
    expect(detail!.belief.supersededBy).toEqual([]);
    // Their successors of mine replace nothing of mine; my own successor of old does.
    expect(detail!.belief.statusNow).toBe("active");
    expect((await inspect().sessions(me, null, 50)).sessions).toMatchObject([{ sessionId: "s-1", traces: 1 }]);
    expect(await inspect().summary(me, SENSITIVITY.restricted)).toEqual({ beliefsByStatus: { active: 2, superseded: 1 }, beliefsAboveCeiling: 0, sessions: 1 });
  });
});

import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { HeadTracker } from "../../src/recall/moments/head-tracker.js";
import { ERASED_TABLES, erasePrincipal } from "../../src/store/erase-principal.js";
import type { MemoryStore } from "../../src/store/memory-store.js";
import { belief, episode, newPrincipal } from "../support/fixtures.js";
import { STORE_KINDS } from "../support/stores.js";
import { recallTrace, useStore } from "./store-helpers.js";

/**
 * ErasePrincipal's store side: every per-principal row of the principal goes,
 * in every table; another principal of the tenant and the same principal id
 * in another tenant keep every row; the head moves on (never back) and is
 * announced with the "erased" marker; a second erase is a no-op.
 */
describe.each(STORE_KINDS)("erasure ($kind)", ({ open }) => {
  const store = useStore(open);
  const a = newPrincipal("a");
  const sameTenant: Principal = { tenantId: a.tenantId, principalId: `b-${randomUUID().slice(0, 8)}` };
  const otherTenant: Principal = { tenantId: `other-${randomUUID().slice(0, 8)}`, principalId: a.principalId };
  const rejected = new Map<string, string>();

  /** Writes a row into every per-principal table, through the store's own write paths. */
  async function seed(s: MemoryStore, p: Principal): Promise<void> {
    const session = `s-${randomUUID().slice(0, 8)}`;
    const e1 = episode({ sessionId: session, sequence: 1, content: "Andy said he writes tersely." });
    const andy = belief({ subject: "Andy", statement: "Andy prefers concise writing.", beliefType: "preference", sourceEpisodeIds: [e1.episodeId] });
    const wrong = belief({ subject: "Andy", statement: "Andy lives in Rome." });
    await s.appendEpisodes(p, [e1, episode({ sessionId: session, sequence: 2 })]);
    await s.putBeliefs(p, [andy, wrong]);
    await s.putSubjectAliases(p, [{ alias: "Andrew", subject: "Andy" }]);
    await s.setPersonaEntry(p, andy.beliefId);
    await s.rejectBelief(p, { rejectionId: randomUUID(), beliefId: wrong.beliefId, kind: "not_true", correction: null, scope: "", reason: "" });
    rejected.set(`${p.tenantId}/${p.principalId}`, wrong.beliefId);
    const cited = recallTrace({ sessionId: session, returned: [andy.beliefId] });
    await s.recordTrace(p, cited);
    await s.recordCitations(p, cited.id, [andy.beliefId]);
    // A recall naming a subject it rendered nothing about: a re-derivation hint.
    await s.recordTrace(p, recallTrace({ sessionId: session, query: { ...cited.query, subjects: ["Zed"] }, returned: [] }));
  }

  async function counts(s: MemoryStore, p: Principal): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ERASED_TABLES) {
      if (table === "belief_embeddings") continue; // the semantic arm's storage is not applied here
      const rows = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1 AND principal_id = $2`, [
        p.tenantId,
        p.principalId,
      ]);
      out[table] = Number(rows[0]!.n);
    }
    return out;
  }

  let before: { a: Record<string, number>; sameTenant: Record<string, number>; otherTenant: Record<string, number> };
  let headBefore = 0;
  beforeAll(async () => {
    const s = store();
    for (const p of [a, sameTenant, otherTenant]) await seed(s, p);
    before = { a: await counts(s, a), sameTenant: await counts(s, sameTenant), otherTenant: await counts(s, otherTenant) };
    headBefore = (await s.head(a)).position;
  });

  it("the seed reaches every per-principal table (so the test below can fail)", () => {
    for (const [table, n] of Object.entries(before.a)) expect({ table, n: n > 0 }).toEqual({ table, n: true });
  });

  it("lists every table of the schema that holds per-principal rows", async () => {
    const rows = await store().db.query<{ table_name: string }>(
      `SELECT DISTINCT table_name::text AS table_name FROM information_schema.columns
       WHERE column_name = 'principal_id' AND table_schema = current_schema() ORDER BY 1`,
    );
    const inSchema = rows.map((r) => r.table_name).filter((t) => t !== "principal_heads");
    expect(inSchema).toEqual(ERASED_TABLES.filter((t) => t !== "belief_embeddings").sort());
  });

  it("deletes every row of the principal, reports the counts, and moves the head forward", async () => {
    const s = store();
    const tracker = new HeadTracker(s);
    const announced: [Principal, number][] = [];
    tracker.onErased((p, position) => announced.push([p, position]));
    await tracker.start();
    try {
      const erasure = await erasePrincipal(s.db, a);
      expect(erasure.deleted).toEqual(before.a);
      expect(erasure.position).toBe(headBefore + 1);
      expect(Object.values(await counts(s, a)).every((n) => n === 0)).toBe(true);
      // The head row stays, one position further: a cache keyed by an older position can never match again.
      expect(await s.head(a)).toMatchObject({ position: headBefore + 1, erasedPosition: headBefore + 1 });
      expect((await s.head(sameTenant)).erasedPosition).toBeNull();
      // Announced through the head channel with the marker, as another sidecar would hear it.
      await vi.waitFor(() => expect(announced).toEqual([[a, headBefore + 1]]), { timeout: 5000 });
    } finally {
      await tracker.stop();
    }
  });

  it("leaves another principal of the tenant and the same principal id in another tenant untouched", async () => {
    const s = store();
    expect(await counts(s, sameTenant)).toEqual(before.sameTenant);
    expect(await counts(s, otherTenant)).toEqual(before.otherTenant);
  });

  it("is idempotent: a second erase deletes nothing and leaves the head alone", async () => {
    const s = store();
    const again = await erasePrincipal(s.db, a);
    expect(Object.values(again.deleted).every((n) => n === 0)).toBe(true);
    expect(again.position).toBe(headBefore + 1);
    expect((await s.head(a)).position).toBe(headBefore + 1);
  });

  it("forgets rejections too: formation may write the rejected belief again and it holds", async () => {
    const s = store();
    const id = rejected.get(`${a.tenantId}/${a.principalId}`)!;
    const { position } = await s.putBeliefs(a, [belief({ beliefId: id, subject: "Andy", statement: "Andy lives in Rome." })]);
    expect(position).toBe(headBefore + 2);
    const [again] = await s.beliefsById(a, [id]);
    expect(again?.status).toBe("active");
  });

  it("an erase of a principal that never wrote leaves no head row", async () => {
    const s = store();
    const nobody = newPrincipal("nobody");
    const erasure = await erasePrincipal(s.db, nobody);
    expect(erasure.position).toBe(0);
    expect(Object.values(erasure.deleted).every((n) => n === 0)).toBe(true);
    const rows = await s.db.query("SELECT 1 FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2", [nobody.tenantId, nobody.principalId]);
    expect(rows).toEqual([]);
  });
});

import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Principal, RecallTrace } from "../../src/domain/model.js";
import { SnapshotCache } from "../../src/recall/moments/snapshot-cache.js";
import { cachedSnapshotBytes } from "../../src/recall/moments/snapshot.js";
import type { CachedSnapshot, PipelineDeps } from "../../src/recall/pipeline.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { TraceStore } from "../../src/store/traces/trace-store.js";
import { rerender } from "../../src/trace/rerender.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, runRecall, traceWriter } from "../support/pipeline.js";
import { recallQuery, recallTrace, recalledBelief, useStore } from "./store-helpers.js";

/** The client, noting every statement's text (inside transactions too) and every transaction it opens. */
function recording(db: SqlClient, statements: string[], transactions: unknown[] = []): SqlClient {
  return {
    ...db,
    query: (text, params, options) => (statements.push(text), db.query(text, params, options)),
    transaction: (work, options) => (transactions.push(work), db.transaction((tx) => work(recording(tx, statements, transactions)), options)),
  };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The statements that wrote traces: the batch insert, or on PGlite a call of the session function holding it. */
const traceWrites = (statements: readonly string[]) =>
  statements.filter((s) => s.includes("FROM pg_temp.recall_fn_") || (s.includes("INSERT INTO recall_traces") && !s.includes("CREATE OR REPLACE FUNCTION")));
const functionsMade = (statements: readonly string[]) => statements.filter((s) => s.includes("CREATE OR REPLACE FUNCTION pg_temp.recall_fn_"));

/**
 * Traces off the critical path: written in batches (one statement for many
 * traces, of many principals), each still readable only by its own
 * principal; and a cached snapshot's trace references the render it reuses
 * instead of storing its ranked list again, while reading back in full.
 */
describe.each(STORE_KINDS)("trace batches and reused renders ($kind)", ({ open }) => {
  const store = useStore(open);

  const rawRow = async (p: Principal, traceId: string) =>
    (
      await store().db.query<{ has_ranked: boolean; has_dropped: boolean; reuses: string | null }>(
        `SELECT ranked IS NOT NULL AS has_ranked, dropped_for_budget IS NOT NULL AS has_dropped, reuses_trace_id::text AS reuses
         FROM recall_traces WHERE tenant_id = $1 AND principal_id = $2 AND trace_id = $3`,
        [p.tenantId, p.principalId, traceId],
      )
    )[0];

  it("on PGlite writes through a session function that keeps its plan, made once and again when its session lost it; on PostgreSQL as a prepared statement", async () => {
    const p = newPrincipal();
    const statements: string[] = [];
    const traces = new TraceStore(recording(store().db, statements));
    const [t1, t2, t3] = [recallTrace({ returned: [] }), recallTrace({ returned: [] }), recallTrace({ returned: [] })];
    expect([...(await traces.recordBatch([{ principal: p, trace: t1 }]))]).toEqual([t1.id]);
    expect([...(await traces.recordBatch([{ principal: p, trace: t2 }]))]).toEqual([t2.id]);
    expect(traceWrites(statements)).toHaveLength(2);
    const made = functionsMade(statements);
    if (store().db.kind === "postgres") {
      expect(made).toEqual([]);
      return;
    }
    expect(made).toHaveLength(1);
    // The session loses the function (as a new PGlite would): the next write makes it again and lands.
    const name = /pg_temp\.recall_fn_[0-9a-f]+/.exec(made[0]!)![0];
    await store().db.exec(`DROP FUNCTION ${name}(text, text, text)`);
    expect([...(await traces.recordBatch([{ principal: p, trace: t3 }]))]).toEqual([t3.id]);
    expect(functionsMade(statements)).toHaveLength(2);
    for (const t of [t1, t2, t3]) expect(await store().getTrace(p, t.id)).toEqual(t);
  });

  it("writes a batch in one statement per tenant (so each routes to one shard), each trace with its event, each readable only by its owner", async () => {
    const a = newPrincipal();
    const [a2, b] = [{ ...newPrincipal(), tenantId: a.tenantId }, { ...newPrincipal(), tenantId: "other-tenant" }];
    const ta = recallTrace({ returned: [] });
    const ta2 = recallTrace({ returned: [] });
    const tb = recallTrace({ returned: [] });
    const inserts: string[] = [];
    const written = await new TraceStore(recording(store().db, inserts)).recordBatch([
      { principal: a, trace: ta },
      { principal: b, trace: tb },
      { principal: a2, trace: ta2 },
    ]);
    expect([...written].sort()).toEqual([ta.id, ta2.id, tb.id].sort());
    expect(traceWrites(inserts)).toHaveLength(2);
    expect(await store().getTrace(a2, ta2.id)).toEqual(ta2);
    expect(await store().getTrace(a, ta.id)).toEqual(ta);
    expect(await store().getTrace(b, tb.id)).toEqual(tb);
    // Neither principal reads the other's trace, nor one of another tenant under the same principal id.
    expect(await store().getTrace(a, tb.id)).toBeNull();
    expect(await store().getTrace(b, ta.id)).toBeNull();
    expect(await store().getTrace({ tenantId: b.tenantId, principalId: a.principalId }, ta.id)).toBeNull();
    expect((await store().traces.recalledEvents(a)).map((e) => e.traceId)).toEqual([ta.id]);
    expect((await store().traces.recalledEvents(b)).map((e) => e.traceId)).toEqual([tb.id]);
    // A retry of the same batch writes nothing and adds no event.
    expect(await store().traces.recordBatch([{ principal: a, trace: ta }, { principal: b, trace: tb }])).toEqual(new Set());
    expect(await store().traces.recalledEvents(a, { all: true })).toHaveLength(1);
  });

  it("stores each trace's ranked list as the JSON text it was sent, in batch order, whatever its statements hold", async () => {
    const p = newPrincipal();
    const odd = ['quotes " and \\ backslashes', "a \u0001 control, a tab\t and a newline\n", "astral 𝄞 and a lone \ud800 surrogate", "ünïcödé, 漢字, emoji 🦊"];
    const full = recallTrace({ returned: odd.map(() => randomUUID()) });
    // One Date object shared by two items, as beliefs share theirs from recall to recall (their texts are remembered).
    const until = new Date("2026-05-06T07:08:09.010Z");
    full.ranked = full.returned.map((id, i) => recalledBelief(id, { statement: odd[i]!, score: 0.1 + i / 7, validTo: i % 2 === 1 ? until : null }));
    const empty = recallTrace({ returned: [] });
    const none = { ...recallTrace({ returned: [] }), ranked: null };
    const reused = { ...recallTrace({ returned: full.returned }), moment: "snapshot" as const, reusesTraceId: full.id };
    const last = recallTrace({ returned: [randomUUID()] });
    const batch = [full, empty, none, reused, last];
    await store().traces.recordBatch(batch.map((trace) => ({ principal: p, trace })));
    const stored = await store().db.query<{ trace_id: string; ranked: string | null }>(
      "SELECT trace_id::text AS trace_id, ranked FROM recall_traces WHERE tenant_id = $1 AND principal_id = $2",
      [p.tenantId, p.principalId],
    );
    const rankedOf = new Map(stored.map((r) => [r.trace_id, r.ranked]));
    // Byte for byte what was sent (a jsonb column would give back its own normalised text).
    expect(rankedOf.get(full.id)).toBe(JSON.stringify(full.ranked));
    expect(rankedOf.get(empty.id)).toBe("[]");
    expect(rankedOf.get(none.id)).toBeNull();
    expect(rankedOf.get(reused.id)).toBeNull();
    expect(rankedOf.get(last.id)).toBe(JSON.stringify(last.ranked));
    expect((await store().getTrace(p, full.id))!.ranked).toEqual(full.ranked);
    expect((await store().getTrace(p, reused.id))!.ranked).toEqual(full.ranked);
    expect((await store().getTrace(p, empty.id))!.ranked).toEqual([]);
    expect((await store().getTrace(p, none.id))!.ranked).toBeNull();
  });

  describe("a cached snapshot's trace", () => {
    async function hitAndOriginal() {
      const p = newPrincipal();
      await store().putBeliefs(p, [
        belief({ statement: "Andy prefers concise, prose-first writing." }),
        belief({ statement: "Andy works from Berlin.", beliefType: "user_model_attr" }),
        ...Array.from({ length: 50 }, (_, i) => belief({ subject: `service ${i}`, statement: `Service ${i} is deployed weekly.`, beliefType: "project_fact" })),
      ]);
      const writer = traceWriter(store(), capturingLogger().logger);
      const deps: PipelineDeps = {
        ...pipelineDeps(store(), writer),
        snapshotCache: new SnapshotCache<CachedSnapshot>(1 << 22, cachedSnapshotBytes),
      };
      const original = await runRecall(deps, p, requested({ budgetTokens: 60 }), { kind: "snapshot", sessionId: "s1" });
      const hit = await runRecall(deps, p, requested({ budgetTokens: 60 }), { kind: "snapshot", sessionId: "s2", turnId: "t2" });
      expect(original.result.fromCache).toBe(false);
      expect(hit.result.fromCache).toBe(true);
      return { p, original, hit, writer };
    }

    it("stores a reference to the render it reuses, not a copy of its ranked list, and reads back in full", async () => {
      const { p, original, hit } = await hitAndOriginal();
      expect(await rawRow(p, original.result.traceId)).toEqual({ has_ranked: true, has_dropped: true, reuses: null });
      expect(await rawRow(p, hit.result.traceId)).toEqual({ has_ranked: false, has_dropped: false, reuses: original.result.traceId });

      const stored = (await store().getTrace(p, original.result.traceId))!;
      const back = (await store().getTrace(p, hit.result.traceId))!;
      expect(stored.ranked!.length).toBeGreaterThan(hit.result.items.length);
      expect(back.ranked).toEqual(stored.ranked);
      expect(back.droppedForBudget).toEqual(stored.droppedForBudget);
      expect(back).toMatchObject({ sessionId: "s2", turnId: "t2", reusesTraceId: original.result.traceId, returned: stored.returned });
      // Faithful: the hit's own trace re-renders to the bytes it was answered with.
      expect(back.renderedSha256).toBe(sha256(hit.result.rendered));
      expect(await rerender(back, await store().beliefsById(p, back.returned))).toBe(hit.result.rendered);
    });

    it("never reads a render of another principal through a reference", async () => {
      const { p, original } = await hitAndOriginal();
      const intruder = { tenantId: p.tenantId, principalId: `${p.principalId}-other` };
      const forged = recallTrace({ moment: "snapshot", reusesTraceId: original.result.traceId, ranked: null, droppedForBudget: null });
      await store().recordTrace(intruder, forged);
      const back = (await store().getTrace(intruder, forged.id))!;
      expect(back.ranked).toBeNull();
      expect(back.droppedForBudget).toBeNull();
    });

    it("keeps the render's ranked list while a hit needs it, and gives the hit a copy when the render's session is deleted", async () => {
      const { p, original, hit } = await hitAndOriginal();
      const stored = (await store().getTrace(p, original.result.traceId))!;
      // Past the render's operator window but inside the hit's: the render keeps its list.
      const between = new Date(stored.operatorFieldsExpireAt.getTime() + 1);
      await store().db.query(
        `UPDATE recall_traces SET operator_fields_expire_at = $4::timestamptz WHERE tenant_id = $1 AND principal_id = $2 AND trace_id = $3`,
        [p.tenantId, p.principalId, hit.result.traceId, new Date(between.getTime() + 3_600_000).toISOString()],
      );
      await store().traces.expireOperatorFields(p.tenantId, between, 100);
      expect((await store().getTrace(p, hit.result.traceId))!.ranked).toEqual(stored.ranked);

      await store().traces.deleteSession(p, "s1");
      expect(await store().getTrace(p, original.result.traceId)).toBeNull();
      expect(await rawRow(p, hit.result.traceId)).toEqual({ has_ranked: true, has_dropped: true, reuses: null });
      expect((await store().getTrace(p, hit.result.traceId))!.ranked).toEqual(stored.ranked);

      // Once the hit's own window passes, its operator fields go like any other's.
      await store().traces.expireOperatorFields(p.tenantId, new Date(between.getTime() + 7_200_000), 100);
      expect((await store().getTrace(p, hit.result.traceId))!.ranked).toBeNull();
    });
  });

  describe("the recall misses of a batch", () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 4, 5, minute));
    /**
     * An in-turn trace naming `subjects` whose ranked list holds a belief
     * about each of `held` (the first rendered, the others dropped only for
     * the budget) and one about "Zed" that was neither: ranked, not held.
     */
    const naming = (subjects: string[], held: string[] = [], overrides: Partial<RecallTrace> = {}): RecallTrace => {
      const ranked = held.map((subject) => recalledBelief(randomUUID(), { subject }));
      const ids = ranked.map((r) => r.beliefId);
      return recallTrace({
        query: recallQuery({ subjects }),
        returned: ids.slice(0, 1),
        droppedForBudget: ids.slice(1),
        ranked: [...ranked, recalledBelief(randomUUID(), { subject: "Zed" })],
        ...overrides,
      });
    };
    const hints = async (p: Principal) =>
      (await store().traces.rederivationHints(p, { minMisses: 1 })).sort((x, y) => (x.subjectKey < y.subjectKey ? -1 : 1));
    const ACME_ALIASES = [
      { alias: "Acme", subject: "Acme Corp" },
      { alias: "ACME Inc", subject: "Acme Corp" },
    ];

    it("are counted with the traces, for a batch mixing traces with and without subjects, of several principals and tenants, in one statement per tenant and no transaction", async () => {
      const a = newPrincipal();
      const [a2, b] = [{ ...newPrincipal(), tenantId: a.tenantId }, { tenantId: `${a.tenantId}-b`, principalId: a.principalId }];
      await store().putSubjectAliases(a, ACME_ALIASES);
      // Two names of one subject: one miss, under the canonical subject, as first named.
      const t1 = naming(["Acme", "Acme Corp", "Andy"], ["andy"], { createdAt: at(1) });
      const t2 = recallTrace({ query: recallQuery({ subjects: [] }), createdAt: at(2) });
      const t3 = naming(["Cleo", "Zed"], [], { createdAt: at(3) });
      const t4 = naming(["Acme"], [], { createdAt: at(4) });
      // No ranked list (its operator fields gone): it cannot tell what it held, so it counts nothing.
      const t5 = naming(["Bea"], [], { ranked: null, createdAt: at(5) });
      const statements: string[] = [];
      const transactions: unknown[] = [];
      const written = await new TraceStore(recording(store().db, statements, transactions)).recordBatch([
        { principal: a, trace: t1 },
        { principal: a, trace: t2 },
        { principal: a2, trace: t3 },
        { principal: b, trace: t4 },
        { principal: a, trace: t5 },
      ]);
      expect([...written].sort()).toEqual([t1, t2, t3, t4, t5].map((t) => t.id).sort());
      // Besides the writes, only (on PGlite) the session function holding the statement is made.
      const others = statements.length - traceWrites(statements).length - functionsMade(statements).length;
      expect({ writes: traceWrites(statements).length, others, transactions: transactions.length }).toEqual({ writes: 2, others: 0, transactions: 0 });
      const hint = (subjectKey: string, subject: string, t: RecallTrace) => ({
        subjectKey,
        subject,
        misses: 1,
        firstMissedAt: t.createdAt,
        lastMissedAt: t.createdAt,
        lastTraceId: t.id,
      });
      expect(await hints(a)).toEqual([hint("acme corp", "Acme", t1)]);
      expect(await hints(a2)).toEqual([hint("cleo", "Cleo", t3), hint("zed", "Zed", t3)]);
      // Another tenant's principal of the same id has no alias of Acme: its own hint, under its own key.
      expect(await hints(b)).toEqual([hint("acme", "Acme", t4)]);
    });

    it("a retried batch, or one that partly landed, counts each trace's misses once", async () => {
      const p = newPrincipal();
      const t1 = naming(["Acme"], [], { createdAt: at(1) });
      const t2 = naming(["Acme", "Bea"], [], { createdAt: at(2) });
      expect(await store().traces.recordBatch([{ principal: p, trace: t1 }])).toEqual(new Set([t1.id]));
      expect(await store().traces.recordBatch([{ principal: p, trace: t1 }, { principal: p, trace: t2 }])).toEqual(new Set([t2.id]));
      expect(await store().traces.recordBatch([{ principal: p, trace: t1 }, { principal: p, trace: t2 }])).toEqual(new Set());
      expect((await hints(p)).map((h) => [h.subjectKey, h.misses, h.firstMissedAt, h.lastTraceId])).toEqual([
        ["acme", 2, t1.createdAt, t2.id],
        ["bea", 1, t2.createdAt, t2.id],
      ]);
    });

    it("apply in batch order, exactly as the same traces recorded one at a time", async () => {
      const tenantId = newPrincipal().tenantId;
      const [batched, oneByOne] = [{ tenantId, principalId: "batched" }, { tenantId, principalId: "one-by-one" }];
      // Before the batch, each has missed Wren twice and Zed once.
      const before = [naming(["Wren", "Zed"], [], { createdAt: at(0) }), naming(["Wren"], [], { createdAt: at(1) })];
      const batch = [
        naming(["Acme", "acme corp", "Wren"], [], { createdAt: at(10) }),
        // Recorded out of time order: last_missed_at is the latest miss, whatever the order.
        naming(["ACME", "Wren", "Yara"], ["ACME Inc"], { createdAt: at(5) }),
        recallTrace({ query: recallQuery({ subjects: [] }), createdAt: at(12) }),
        naming(["acme", "Yara", "yara"], ["Yara"], { createdAt: at(13) }),
        naming(["zed"], ["ZED"], { createdAt: at(14) }),
        naming(["wren", "WREN"], [], { createdAt: at(15) }),
      ];
      for (const p of [batched, oneByOne]) {
        await store().putSubjectAliases(p, ACME_ALIASES);
        for (const t of before) await store().recordTrace(p, { ...t, id: randomUUID() });
      }
      await store().traces.recordBatch(batch.map((trace) => ({ principal: batched, trace })));
      for (const trace of batch) await store().traces.recordBatch([{ principal: oneByOne, trace }]);

      const [, , , t4, , t6] = batch as [RecallTrace, RecallTrace, RecallTrace, RecallTrace, RecallTrace, RecallTrace];
      const expected = [
        // Missed (as first named), answered through an alias, missed again: counted afresh from the last miss.
        { subjectKey: "acme corp", subject: "acme", misses: 1, firstMissedAt: t4.createdAt, lastMissedAt: t4.createdAt, lastTraceId: t4.id },
        // Missed in three traces of the batch on top of the two before; named twice in one trace, counted once, as last spelled.
        { subjectKey: "wren", subject: "WREN", misses: 5, firstMissedAt: at(0), lastMissedAt: t6.createdAt, lastTraceId: t6.id },
        // Yara (missed, then answered) and Zed (answered) have no hint left.
      ];
      expect(await hints(batched)).toEqual(expected);
      expect(await hints(oneByOne)).toEqual(expected);
    });
  });

  it("a trace waiting to be written is read from the queue by its own principal only, and settled before a store read", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief({ statement: "Andy keeps bees on the roof." })]);
    const writer = traceWriter(store(), capturingLogger().logger);
    const t = recallTrace({ sessionId: "s", moment: "snapshot" });
    await writer.record(p, t);
    expect(await store().getTrace(p, t.id)).toBeNull();
    expect(writer.pending(p, t.id)).toBe(t);
    expect(writer.pending({ ...p, principalId: `${p.principalId}-other` }, t.id)).toBeUndefined();
    expect(writer.pending({ ...p, tenantId: `${p.tenantId}-other` }, t.id)).toBeUndefined();
    await writer.settle(p, (x) => x.sessionId === "s");
    expect(await store().getTrace(p, t.id)).toEqual(t);
    expect(writer.pending(p, t.id)).toBeUndefined();
  });
});

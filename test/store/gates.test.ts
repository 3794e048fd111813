import { createHash, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { BENCHMARK_BASELINE, BENCHMARK_FIXTURE } from "../../src/cli/eval.js";
import { SENSITIVITY, type Belief, type Principal, type RecalledBelief, type SensitivityLevel } from "../../src/domain/model.js";
import { cachedSnapshotBytes } from "../../src/recall/moments/snapshot.js";
import { SnapshotCache } from "../../src/recall/moments/snapshot-cache.js";
import { eligibilityFilter } from "../../src/domain/hard-filter.js";
import type { CachedSnapshot, PipelineDeps, RecallOutcome } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY, type RetrievalPolicy } from "../../src/recall/policy.js";
import { effectiveQuery, requestedQuery } from "../../src/recall/query-former.js";
import { shortId } from "../../src/recall/render/render.js";
import { rerender } from "../../src/trace/rerender.js";
import { traceView } from "../../src/trace/trace-view.js";
import { applyWrite, benchmarkDeps, commonPrefixBytes, pinLastWrite, runBenchmark, runProbe, type BenchmarkResult } from "../../src/eval/benchmark.js";
import { readBaseline, tripleRegressions } from "../../src/eval/benchmark-baseline.js";
import { fixtureBeliefId, readBenchmarkFixture, type BenchmarkFixture, type FixtureProbe } from "../../src/eval/benchmark-fixture.js";
import { freshPgliteWithVector, STORE_KINDS } from "../support/stores.js";
import { pino } from "pino";
import { EmbeddingBackfill } from "../../src/embed/embedding-backfill.js";
import { hashedEmbedder } from "../../src/embed/hashed-embedder.js";
import { DEFAULT_SEMANTIC_SIMILARITY } from "../../src/domain/semantic-calibration.js";
import { enableSemantic, SemanticStore } from "../../src/store/candidates/semantic-store.js";
import { documentWeights } from "../../src/recall/policy.js";
import type { BenchmarkSemantic } from "../../src/eval/benchmark.js";
import { episodeQuery, useStore } from "./store-helpers.js";

/**
 * The spec's nine hard gates, on both stores, over the deterministic
 * benchmark's fixture (test/fixtures/benchmark/fixture.json): the benchmark
 * runs once per store, then each gate checks its rule on the probes'
 * results and with recalls of its own. Gates 7 and 8 change memory, so they
 * work on a copy of the fixture's principal and leave the shared one alone.
 * Related suites that test the same rules in more depth: historical.test.ts,
 * isolation.test.ts, trace-faithfulness.test.ts, traces.test.ts (view
 * ceiling), rejections.test.ts, moments.test.ts.
 */

const ANDY: Principal = { tenantId: "acme", principalId: "andy" };
const BEA: Principal = { tenantId: "acme", principalId: "bea" };
const GLOBEX_ANDY: Principal = { tenantId: "globex", principalId: "andy" };
/** After every write of the fixture. */
const END = new Date("2026-06-02T00:00:00Z");
const MOMENTS = ["snapshot", "in_turn", "child_run", "search"] as const;

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const who = (p: Principal) => `${p.tenantId}/${p.principalId}`;

/** A retrieval policy upgrade: another version, other weights, no floor, room for every candidate. */
const UPGRADED: RetrievalPolicy = (() => {
  const p = structuredClone(RETRIEVAL_POLICY) as RetrievalPolicy;
  p.version = "retrieval@gate-upgrade";
  for (const w of Object.values(p.profiles)) Object.assign(w, { match: 0.9, conf: 0.05, authority: 0.05, floor: 0 });
  for (const m of Object.values(p.moments)) Object.assign(m, { maxItems: 100, budgetTokens: 8000 });
  for (const c of Object.values(p.snapshotCaps)) Object.assign(c, { maxItems: 100, budgetTokens: 8000 });
  return p;
})();

/** Both stores with the semantic arm off, and PGlite with it on (the hashed embedder: PostgreSQL here has no pgvector). */
const GATE_STORES = [
  ...STORE_KINDS.map((k) => ({ ...k, semanticArm: false })),
  { kind: "pglite, semantic arm on" as const, open: freshPgliteWithVector, semanticArm: true },
];

describe.each(GATE_STORES)("hard gates ($kind)", ({ open, semanticArm }) => {
  const store = useStore(open);
  let semantic: BenchmarkSemantic | undefined;
  /** The benchmark's pipeline dependencies, with the semantic arm when it is on. */
  const depsAt = (policy: RetrievalPolicy, clock: () => Date) => benchmarkDeps(store(), policy, clock, semantic?.search);
  let fixture: BenchmarkFixture;
  let bench: BenchmarkResult;
  /** Fixture key → the principal it belongs to. */
  const owner = new Map<string, string>();

  beforeAll(async () => {
    fixture = await readBenchmarkFixture(BENCHMARK_FIXTURE);
    for (const p of fixture.principals) for (const b of p.beliefs) owner.set(keyOf(b.beliefId), who(p.principal));
    for (const s of fixture.sessions) {
      for (const step of s.steps) if (step.kind === "write") for (const b of step.beliefs) owner.set(keyOf(b.beliefId), who(s.principal));
    }
    if (semanticArm) {
      await enableSemantic(store().db);
      const semanticStore = new SemanticStore(store().db, documentWeights(RETRIEVAL_POLICY));
      const embedder = hashedEmbedder(256);
      const backfill = new EmbeddingBackfill(
        semanticStore,
        embedder,
        { batch: 64, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted },
        pino({ level: "silent" }),
      );
      semantic = {
        search: { embedder, store: semanticStore, similarity: DEFAULT_SEMANTIC_SIMILARITY.hashed },
        embedAll: async () => {
          while ((await backfill.embedBatch()) > 0);
        },
      };
    }
    bench = await runBenchmark(fixture, store(), RETRIEVAL_POLICY, semantic);
  });

  const keyOf = (beliefId: string) => fixture.keyOf.get(beliefId) ?? `unknown:${beliefId}`;
  const keys = (items: readonly RecalledBelief[]) => items.map((i) => keyOf(i.beliefId));
  const unblocked = (returned: readonly string[]) => returned.filter((r) => !r.endsWith("!blocked"));

  interface AskOptions {
    deps?: PipelineDeps;
    policy?: RetrievalPolicy;
    watermark?: number | null;
    sessionId?: string;
    turnId?: string;
    ceiling?: SensitivityLevel;
  }

  /** One recall through the real pipeline, as the benchmark makes them, on the clock after every fixture write. */
  function ask(p: Principal, q: Partial<FixtureProbe>, o: AskOptions = {}): Promise<RecallOutcome> {
    const deps = o.deps ?? depsAt(o.policy ?? RETRIEVAL_POLICY, () => END);
    const probe: FixtureProbe = {
      kind: "probe",
      id: "gate",
      moment: "in_turn",
      text: null,
      subjects: [],
      types: [],
      project: "veetbot",
      ceiling: SENSITIVITY.personal,
      asOf: null,
      expected: [],
      acceptable: [],
      forbidden: [],
      transfer: false,
      ...q,
    };
    return runProbe(deps, { id: "gate", principal: p, sessionType: "interactive" }, probe, {
      snapshotWatermark: o.watermark ?? null,
      sessionId: o.sessionId ?? "",
      ceiling: o.ceiling,
      turnId: o.turnId,
    });
  }

  /** A copy of the fixture's Andy under another principal id, for the gates that change memory. */
  async function copyOfAndy(label: string): Promise<{ p: Principal; beliefs: Belief[] }> {
    const p: Principal = { tenantId: "acme", principalId: `andy-${label}` };
    const beliefs = fixture.principals.find((x) => who(x.principal) === who(ANDY))!.beliefs;
    await store().putBeliefs(p, beliefs);
    await pinLastWrite(store(), p, fixture.clock);
    await semantic?.embedAll();
    return { p, beliefs };
  }

  it("gate 1 currency: after a preference change the new belief returns, on every moment, and the superseded one never does", async () => {
    const changed = bench.probes.find((p) => p.id === "andy-coffee-changed")!;
    expect(changed.hits).toEqual(["andy-coffee-oat"]);
    expect(changed.corrections).toEqual(["andy-coffee-black"]);
    // Every live recall the benchmark made after the change.
    const after = bench.probes.slice(bench.probes.findIndex((p) => p.id === "andy-coffee-changed"));
    for (const p of after.filter((r) => r.id !== "andy-coffee-then")) {
      expect(p.returned, p.id).not.toContain("andy-coffee-black");
      expect(p.returned, p.id).not.toContain("andy-coffee-milk");
    }
    for (const moment of MOMENTS) {
      const { result } = await ask(ANDY, { moment, text: "How do I take my coffee?" });
      expect(keys(result.items), moment).toContain("andy-coffee-oat");
      expect(keys(result.items), moment).not.toContain("andy-coffee-black");
      expect(keys(result.items), moment).not.toContain("andy-coffee-milk");
    }
  });

  it("gate 1 currency: a successor written on its own supersedes the old belief, whichever row was written last", async () => {
    const tabs = fixtureBeliefId("andy-tabs");
    const since = new Date("2026-06-01T10:00:00Z");
    // Words that match the old statement and not the new one: only the hard filter can keep the old one out.
    const question = { text: "Tabs or not, in TypeScript?" };
    for (const order of ["successor-last", "old-last"] as const) {
      const { p, beliefs } = await copyOfAndy(`gate1-${order}`);
      const old = beliefs.find((b) => b.beliefId === tabs)!;
      const spaces = randomUUID();
      // Formation writes only the successor and leaves the old row active.
      const successor = { ...old, beliefId: spaces, statement: "Two-space indent from now on.", sourceEpisodeIds: [], supersedes: [tabs], validFrom: since, recordedAt: since, lastEvidenceAt: since };
      const deps = depsAt(RETRIEVAL_POLICY, () => END);
      const opened = await ask(p, { moment: "snapshot", text: "Review my TypeScript pull request" }, { deps, sessionId: `gate1-${order}` });
      expect(opened.result.items.map((i) => i.beliefId), order).toContain(tabs);
      await applyWrite(store(), p, { kind: "write", at: since, beliefs: [successor] });
      if (order === "old-last") await applyWrite(store(), p, { kind: "write", at: since, beliefs: [{ ...old, evidenceCount: old.evidenceCount + 1 }] });
      expect((await store().beliefsById(p, [tabs]))[0]!.status).toBe("active");

      for (const moment of MOMENTS) {
        const { result } = await ask(p, { moment, ...question }, { deps });
        expect(result.items.map((i) => i.beliefId), `${order}, ${moment}`).not.toContain(tabs);
      }
      // The session that saw the old belief in its snapshot is told, ahead of the block.
      const turn = await ask(p, question, { deps, sessionId: `gate1-${order}`, watermark: opened.result.snapshotWatermark, turnId: `gate1-${order}-t1` });
      expect(turn.result.corrections, order).toEqual([{ beliefId: tabs, supersededBy: spaces, noLongerHoldsAsOf: since }]);
      expect(turn.result.rendered.startsWith(`correction: [${shortId(tabs)}] no longer holds`), order).toBe(true);
      expect(turn.result.items.map((i) => i.beliefId), order).not.toContain(tabs);
      // History before the successor began still has the old belief.
      const then = await ask(p, { ...question, asOf: new Date("2026-05-01T00:00:00Z") }, { deps });
      expect(then.result.items.map((i) => i.beliefId), order).toContain(tabs);
      expect(then.result.items.map((i) => i.beliefId), order).not.toContain(spaces);
    }
  });

  it("gate 2 historical correctness: an as_of query returns what was believed then", async () => {
    const cases: [string, string][] = [
      ["2026-02-01T00:00:00Z", "andy-coffee-milk"],
      ["2026-04-01T00:00:00Z", "andy-coffee-black"],
      ["2026-06-01T11:00:00Z", "andy-coffee-oat"],
    ];
    const coffee = ["andy-coffee-milk", "andy-coffee-black", "andy-coffee-oat"];
    for (const [asOf, held] of cases) {
      for (const moment of ["in_turn", "child_run", "search"] as const) {
        const { result } = await ask(ANDY, { moment, text: "How do I take my coffee?", asOf: new Date(asOf) });
        expect(keys(result.items).filter((k) => coffee.includes(k)), `${moment} as of ${asOf}`).toEqual([held]);
        expect(result.rendered).toContain(`as_of="${asOf.replace(".000Z", "Z")}"`);
      }
    }
    expect(bench.probes.find((p) => p.id === "andy-coffee-then")!.hits).toEqual(["andy-coffee-milk"]);
  });

  it("gate 3 injection resistance: a poisoned belief renders [BLOCKED] in its own line, and the rest of the block is intact", async () => {
    const withPoison = bench.probes.filter((p) => p.returned.some((r) => r.startsWith("andy-deploy-poison")));
    expect(withPoison.length).toBeGreaterThan(0);
    for (const p of withPoison) expect(p.returned, p.id).toContain("andy-deploy-poison!blocked");
    expect(bench.metrics.policyFailures.poisonedUnblocked).toBe(0);

    const { result } = await ask(ANDY, { text: "How do I deploy the veetbot service?" });
    const lines = result.rendered.trimEnd().split("\n");
    expect(lines).toContain(`  [${shortId(fixtureBeliefId("andy-deploy-poison"))}] [BLOCKED] withheld: failed injection scan.`);
    expect(result.rendered).not.toMatch(/previous instructions|without asking/i);
    expect(lines[0]).toMatch(/^<memory as_of="[^"]+" policy="[^"]+">$/);
    expect(lines[lines.length - 1]).toBe("</memory>");
    const shown = result.items.filter((i) => !i.blocked);
    expect(shown.length).toBeGreaterThan(1);
    for (const item of shown) expect(lines.some((l) => l.startsWith(`  [${shortId(item.beliefId)}] `) && l.includes(item.statement))).toBe(true);
    expect(lines).toHaveLength(result.items.length + 2);
  });

  describe("gate 4 scope isolation", () => {
    it("gate 4 scope isolation: every benchmark probe returned only its own principal's beliefs", () => {
      const sessionOwner = new Map(fixture.sessions.map((s) => [s.id, who(s.principal)]));
      for (const p of bench.probes) {
        for (const k of unblocked(p.returned)) expect(owner.get(k), `${p.id} returned ${k}`).toBe(sessionOwner.get(p.session));
      }
      expect(bench.metrics.policyFailures.forbidden).toBe(0);
    });

    const outsiders: [string, Principal][] = [
      ["another principal of the same tenant", BEA],
      ["the same principal id in another tenant", GLOBEX_ANDY],
    ];
    it.each(outsiders)("gate 4 scope isolation: %s gets zero of Andy's results on every query path", async (_label, other) => {
      const own = (id: string) => owner.get(keyOf(id)) === who(other);
      // Recall at each moment, and Search, with Andy's words, subjects and alias.
      const texts = ["How do I take my coffee?", "How do I deploy the veetbot service?", "tabs spaces indentation Lisbon padel Terraform dentist"];
      for (const moment of MOMENTS) {
        for (const text of texts) {
          const { result, trace } = await ask(other, { moment, text, subjects: ["Andy", "veetbot", "ledger", "Terraform", "me"] }, { ceiling: SENSITIVITY.restricted });
          for (const item of result.items) expect(own(item.beliefId), `${moment} "${text}" returned ${keyOf(item.beliefId)}`).toBe(true);
          for (const item of trace.ranked ?? []) expect(own(item.beliefId), `${moment} ranked ${keyOf(item.beliefId)}`).toBe(true);
        }
      }
      // The recall delta from position 0, in Andy's session: no delta candidate and no correction crosses.
      const delta = await ask(other, { text: "coffee deploy tabs" }, { watermark: 0, sessionId: "bench/andy-veetbot" });
      for (const item of delta.result.items) expect(own(item.beliefId), `delta returned ${keyOf(item.beliefId)}`).toBe(true);
      expect(delta.result.corrections).toEqual([]);
      expect(await store().snapshotCorrections(other, "bench/andy-veetbot", 0, END)).toEqual([]);
      // RecallEpisodes: the same session id exists in all three principals.
      const episodes = await store().episodes(other, episodeQuery({ sessionId: "chat-0528", includeArchival: true }));
      const ownEpisodes = fixture.principals.find((x) => who(x.principal) === who(other))!.episodes.map((e) => e.episodeId);
      expect(episodes.map((e) => e.episodeId)).toEqual(ownEpisodes);
      // GetTrace, operator form and user view; the snapshot report; the session's scope; aliases; beliefs by id.
      const andys = await ask(ANDY, { text: "How do I take my coffee?" }, { sessionId: "gate4", turnId: "gate4-shared-turn" });
      expect(await store().getTrace(other, andys.result.traceId)).toBeNull();
      expect(await traceView(store().traces, other, "andy-veetbot-deploy-how", SENSITIVITY.restricted)).toBeNull();
      await ask(other, { text: "How do I take my coffee?" }, { sessionId: "gate4", turnId: "gate4-shared-turn" });
      const view = await traceView(store().traces, other, "gate4-shared-turn", SENSITIVITY.restricted);
      for (const b of view?.beliefs ?? []) expect(own(b.beliefId), `view shows ${keyOf(b.beliefId)}`).toBe(true);
      expect(await store().snapshotReport(other, RETRIEVAL_POLICY.durableTypes, "bench/andy-veetbot")).toEqual([]);
      expect(await store().sessionSnapshotScope(other, "bench/andy-veetbot")).toBeNull();
      expect(await store().expandSubjects(other, ["me"])).toEqual(["me"]);
      const andyIds = [...owner].filter(([, o]) => o === who(ANDY)).map(([k]) => fixtureBeliefId(k));
      expect(await store().beliefsById(other, andyIds)).toEqual([]);
    });
  });

  it("gate 5 trace faithfulness: re-rendering every probe's recall from its trace's beliefs reproduces rendered_sha256", async () => {
    let checked = 0;
    for (const session of fixture.sessions) {
      for (const step of session.steps) {
        if (step.kind !== "probe") continue;
        const { result } = await ask(session.principal, { ...step }, { turnId: `gate5/${step.id}` });
        const trace = (await store().getTrace(session.principal, result.traceId))!;
        expect(trace.renderedSha256, step.id).toBe(sha256(result.rendered));
        const again = await rerender(trace, await store().beliefsById(session.principal, trace.returned));
        expect(sha256(again), step.id).toBe(trace.renderedSha256);
        checked += 1;
      }
    }
    expect(checked).toBe(bench.probes.length);
  });

  it("gate 6 view ceiling: no belief above min(recall ceiling, viewing ceiling) appears in a view, and none at or below is hidden", async () => {
    const sensitivity = new Map((await store().beliefsById(ANDY, [...fixture.keyOf.keys()])).map((b) => [b.beliefId, b.sensitivity] as const));
    const levels = Object.values(SENSITIVITY) as SensitivityLevel[];
    for (const recallCeiling of levels) {
      const turnId = `gate6-${recallCeiling}`;
      const { result } = await ask(ANDY, { text: "When is my dentist appointment? coffee deploy" }, { ceiling: recallCeiling, turnId });
      for (const viewing of levels) {
        const view = (await traceView(store().traces, ANDY, turnId, viewing))!;
        const bound = Math.min(recallCeiling, viewing);
        const expected = result.items.filter((i) => !i.blocked && sensitivity.get(i.beliefId)! <= bound).map((i) => i.beliefId);
        expect(view.beliefs.map((b) => keyOf(b.beliefId)).sort(), `recall ${recallCeiling}, view ${viewing}`).toEqual(expected.map(keyOf).sort());
      }
    }
    // The confidential belief exists and is recalled at a restricted surface: the ceiling is what keeps it out.
    const restricted = await ask(ANDY, { text: "When is my dentist appointment?" }, { ceiling: SENSITIVITY.restricted });
    expect(keys(restricted.result.items)).toContain("andy-dentist");
    const viewAtPersonal = (await traceView(store().traces, ANDY, `gate6-${SENSITIVITY.restricted}`, SENSITIVITY.personal))!;
    expect(viewAtPersonal.beliefs.map((b) => keyOf(b.beliefId))).not.toContain("andy-dentist");
  });

  it("gate 7 correction durability: a rejected belief does not return, across a policy upgrade and a full re-derivation", async () => {
    const { p, beliefs } = await copyOfAndy("gate7");
    const at = new Date("2026-06-01T20:00:00Z");
    const padel = fixtureBeliefId("andy-padel");
    const lisbon = fixtureBeliefId("andy-lisbon");
    const porto = randomUUID();
    const lisbonBelief = beliefs.find((b) => b.beliefId === lisbon)!;
    await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: padel, kind: "not_true", correction: null, scope: "", reason: "never played padel" });
    await store().rejectBelief(p, {
      rejectionId: randomUUID(),
      beliefId: lisbon,
      kind: "changed",
      correction: { ...lisbonBelief, beliefId: porto, statement: "Andy lives in Porto and works in the Europe/Lisbon time zone.", validFrom: at, recordedAt: at, lastEvidenceAt: at },
      scope: "",
      reason: "moved",
    });

    const neverReturned = async (stage: string) => {
      for (const policy of [RETRIEVAL_POLICY, UPGRADED]) {
        // Not even a candidate: the hard filter keeps them out before any scoring.
        const query = effectiveQuery(requestedQuery({ currentScope: "veetbot" }), "in_turn", policy);
        const eligible = await store().structuredCandidates(eligibilityFilter(p, query, SENSITIVITY.restricted, [], { now: END, excludePersonaHeld: false }), { subjects: [], types: [], typeWeight: 0.25 }, 1000);
        expect(eligible.map((c) => c.belief.beliefId), `${stage}, ${policy.version}`).not.toContain(padel);
        expect(eligible.map((c) => c.belief.beliefId), `${stage}, ${policy.version}`).not.toContain(lisbon);
        for (const moment of MOMENTS) {
          const { result } = await ask(p, { moment, text: "Do I play padel on Thursday evenings? Where do I live, Lisbon?", subjects: ["Andy"] }, { policy });
          const ids = result.items.map((i) => i.beliefId);
          expect(ids, `${stage}, ${policy.version}, ${moment}`).not.toContain(padel);
          expect(ids, `${stage}, ${policy.version}, ${moment}`).not.toContain(lisbon);
          expect(ids, `${stage}, ${policy.version}, ${moment}`).toContain(porto);
        }
      }
    };
    await neverReturned("after the rejections");
    // A full re-derivation: formation writes every belief again, with new evidence.
    await store().putBeliefs(p, beliefs.map((b) => ({ ...b, evidenceCount: b.evidenceCount + 2, lastEvidenceAt: at })));
    await neverReturned("after a full re-derivation");
  });

  it("gate 8 cache preservation: the session-open snapshot bytes do not change when beliefs change mid-session", async () => {
    const { p, beliefs } = await copyOfAndy("gate8");
    let clock = new Date("2026-06-01T09:00:00Z");
    const deps: PipelineDeps = {
      ...depsAt(RETRIEVAL_POLICY, () => clock),
      snapshotCache: new SnapshotCache<CachedSnapshot>(1 << 20, cachedSnapshotBytes),
    };
    const goal = { moment: "snapshot" as const, text: "Fix the failing deploy of the veetbot service" };
    const opened = await ask(p, goal, { deps, sessionId: "gate8" });
    const prefix = opened.result.rendered;
    const concise = fixtureBeliefId("andy-concise");
    expect(opened.result.items.map((i) => i.beliefId)).toContain(concise);

    // Unchanged memory: a re-open is the same bytes, from the cache.
    const reopened = await ask(p, goal, { deps, sessionId: "gate8-reopen" });
    expect(reopened.result.fromCache).toBe(true);
    expect(reopened.result.rendered).toBe(prefix);
    const turn1 = await ask(p, { text: "How should I format my answers?" }, { deps, sessionId: "gate8", watermark: opened.result.snapshotWatermark, turnId: "gate8-t1" });
    expect(turn1.result.corrections).toEqual([]);

    // A snapshot belief changes mid-session: the change reaches the turn as a correction, never through the prefix.
    clock = new Date("2026-06-01T10:00:00Z");
    const terse = randomUUID();
    const old = beliefs.find((b) => b.beliefId === concise)!;
    await applyWrite(store(), p, {
      kind: "write",
      at: clock,
      beliefs: [
        { ...old, status: "superseded", validTo: clock },
        { ...old, beliefId: terse, statement: "Andy now wants answers as short bullet lists, code first.", supersedes: [concise], validFrom: clock, recordedAt: clock, lastEvidenceAt: clock },
      ],
    });
    const turn2 = await ask(p, { text: "How should I format my answers?" }, { deps, sessionId: "gate8", watermark: opened.result.snapshotWatermark, turnId: "gate8-t2" });
    expect(turn2.result.corrections).toEqual([{ beliefId: concise, supersededBy: terse, noLongerHoldsAsOf: clock }]);
    expect(turn2.result.rendered.startsWith(`correction: [${shortId(concise)}] no longer holds`)).toBe(true);
    expect(turn2.result.items.map((i) => i.beliefId)).toContain(terse);

    // The session's prefix is still the bytes rendered at open: its trace hashes them, and the turn's view shows them.
    expect((await store().getTrace(p, opened.result.traceId))!.renderedSha256).toBe(sha256(prefix));
    const view = (await traceView(store().traces, p, "gate8-t2", SENSITIVITY.restricted))!;
    expect(view.beliefs.find((b) => b.beliefId === concise)?.moments).toEqual(["snapshot"]);
    // What a runtime that re-opened mid-session would lose instead: a new render (the benchmark reports the share kept).
    const next = await ask(p, goal, { deps, sessionId: "gate8-next" });
    expect(next.result.fromCache).toBe(false);
    expect(next.result.items.map((i) => i.beliefId)).toContain(terse);
    expect(commonPrefixBytes(prefix, next.result.rendered)).toBeLessThan(Buffer.byteLength(prefix));
    expect(bench.metrics.cache.turns).toBeGreaterThan(0);
  });

  it("gate 9 no triple regression: target-case recall not down, policy failures not up, cache stability not down, noise not up, against the committed baseline", async () => {
    const committed = await readBaseline(BENCHMARK_BASELINE);
    expect(committed, `no ${BENCHMARK_BASELINE}: npm run eval -- --record`).not.toBeNull();
    expect(tripleRegressions(committed!.metrics, bench.metrics)).toEqual([]);
    expect(bench.metrics.policyFailures.total).toBe(0);
  });
});

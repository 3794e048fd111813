import { describe, expect, it } from "vitest";
import {
  SENSITIVITY,
  type Belief,
  type BeliefStatus,
  type Episode,
  type Moment,
  type Principal,
  type RecallContext,
  type SensitivityLevel,
} from "../../src/domain/model.js";
import { PrincipalIndexes } from "../../src/principal-index/index-router.js";
import type { ArmOutcome } from "../../src/recall/arms/arm.js";
import type { CandidateSource } from "../../src/ports/candidate-source.js";
import { recall, type PipelineDeps, type RecallOutcome } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { ROWS_CHANNEL, type MemoryStore } from "../../src/store/memory-store.js";
import { SqlCandidateSource } from "../../src/store/candidates/sql-candidates.js";
import { T0, belief, episode, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested } from "../support/pipeline.js";
import { STORE_KINDS } from "../support/stores.js";
import { sweepOnce } from "../../src/trace/sweeper.js";
import { pick, prng, shuffle } from "../unit/unit-helpers.js";
import { filterFor, lexicalQuery, useStore } from "./store-helpers.js";

/**
 * Property (issue 11, "Same answers"), on both stores: for random belief
 * sets (every lifecycle, sensitivity, portability, validity, persona,
 * rejection and source-context case) and random queries (every moment,
 * Search, as_of and known_at, misspelt names), a recall answered from the
 * principal index gives exactly what the SQL arms give: the same arm
 * candidates with the same scores, the same rendered bytes, items and trace.
 * Then more writes land and the index catches up by its delta, and the
 * property holds again. Outsiders share the owner's ids, subjects and words:
 * the index of the owner never holds or returns them.
 */

/** PARITY_SEEDS=1-200 widens the search locally. */
const SEEDS = seedsFromEnv(process.env.PARITY_SEEDS) ?? [11, 12, 13, 14];
const QUERIES_PER_ROUND = 10;
const NOW = new Date("2026-06-01T00:00:00Z");
const DAY_MS = 86_400_000;
const AS_OF = [new Date("2026-01-20T00:00:00Z"), new Date("2026-03-15T00:00:00Z"), new Date("2026-05-30T00:00:00Z")];
const MARKER = "leakmarker";

const SUBJECTS = ["Andy", "Acme Corp", "veetbot", "Priya", "Melanie", "User"];
const TYPES = ["preference", "relationship", "user_model_attr", "project_fact", "decision", "resource", "event"];
const WORDS = [
  "coffee", "deploy", "kubernetes", "berlin", "helix", "concise", "writing", "postgres", "sister", "espresso",
  "budget", "friday", "running", "painted", "caresses", "studies", "généralement", "café", "v2", "2023", "x9",
];
const SCOPES = ["veetbot", "atlas"];
const STATUSES: BeliefStatus[] = ["active", "active", "active", "provisional", "superseded", "expired"];
const LEVELS: SensitivityLevel[] = [SENSITIVITY.public, SENSITIVITY.personal, SENSITIVITY.confidential, SENSITIVITY.restricted];
const KINDS: (Moment | "search")[] = ["snapshot", "in_turn", "in_turn", "child_run", "search"];
const QUESTIONS = [
  "How do I like my coffee?",
  "What did Melanei paint in May 2026?",
  "Where does Priyaa deploy kubernetes?",
  "What car does the user drive?",
  "Tell me about Acme and the budget in March 2026",
];

function seedsFromEnv(spec: string | undefined): number[] | null {
  const m = spec?.match(/^(\d+)-(\d+)$/);
  return m ? Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i) : null;
}

/** Seeded ids, so a failing seed reproduces its ordering by id. */
function seededId(rand: () => number): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
}

function words(rand: () => number, min: number, max: number): string[] {
  return Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, () => pick(rand, WORDS));
}

function randomBelief(rand: () => number, beliefId: string, episodes: readonly Episode[], marker = false): Belief {
  const subject = pick(rand, SUBJECTS);
  const status = pick(rand, STATUSES);
  const validFrom = new Date(T0.getTime() + Math.floor(rand() * 120) * DAY_MS);
  const closed = status === "superseded" || status === "expired" || rand() < 0.1;
  const body = rand() < 0.15 ? `User ${pick(rand, ["has", "owns", "has never owned", "drives"])} a ${pick(rand, WORDS)}` : `${subject} ${words(rand, 2, 6).join(" ")}`;
  const recordedAt = new Date(validFrom.getTime() + Math.floor(rand() * 3) * DAY_MS);
  return belief({
    beliefId,
    subject,
    statement: `${body}${marker ? ` ${MARKER}` : ""}.`,
    beliefType: pick(rand, TYPES),
    status,
    confidence: Math.round(rand() * 100) / 100,
    authority: pick(rand, ["user", "affirmed", "inferred"] as const),
    originScope: pick(rand, SCOPES),
    scopeLevel: pick(rand, ["project", "project", "user", "global"] as const),
    portability: pick(rand, ["portable", "contextual", "local"] as const),
    sensitivity: pick(rand, LEVELS),
    validFrom,
    validTo: closed ? new Date(validFrom.getTime() + (1 + Math.floor(rand() * 60)) * DAY_MS) : null,
    recordedAt,
    retractedAt: rand() < 0.08 ? new Date(recordedAt.getTime() + 20 * DAY_MS) : null,
    evidenceCount: 1 + Math.floor(rand() * 8),
    lastEvidenceAt: validFrom,
    expiresHint: rand() < 0.1 ? new Date(validFrom.getTime() + 30 * DAY_MS) : null,
    flaggedForReview: rand() < 0.05,
    sourceEpisodeIds: episodes.length > 0 && rand() < 0.4 ? [pick(rand, episodes).episodeId] : [],
  });
}

function randomEpisodes(rand: () => number, n: number, marker = false): Episode[] {
  return Array.from({ length: n }, (_, i) =>
    episode({
      sessionId: `s-${Math.floor(i / 6)}`,
      sequence: i,
      occurredAt: new Date(T0.getTime() + i * 60_000),
      content: `${words(rand, 3, 8).join(" ")}${marker ? ` ${MARKER}` : ""}`,
      sensitivity: pick(rand, LEVELS),
    }),
  );
}

interface World {
  owner: Principal;
  outsiders: Principal[];
  ownerIds: string[];
}

/** Writes a random world; returns the owner and the ids of the owner's beliefs. */
async function writeWorld(store: MemoryStore, rand: () => number): Promise<World> {
  const owner = newPrincipal("owner");
  const outsiders = [
    { tenantId: owner.tenantId, principalId: `${owner.principalId}-other` },
    { tenantId: `${owner.tenantId}-other`, principalId: owner.principalId },
  ];
  const ownerIds = Array.from({ length: 25 + Math.floor(rand() * 20) }, () => seededId(rand));
  const ownerEpisodes = randomEpisodes(rand, 24);
  // Half the episodes arrive before the beliefs citing them, half after: both refresh the source context.
  await store.appendEpisodes(owner, ownerEpisodes.slice(0, 12));
  const mine = ownerIds.map((id) => randomBelief(rand, id, ownerEpisodes));
  for (const b of mine) {
    if (rand() < 0.15) b.supersedes = [pick(rand, ownerIds.filter((id) => id !== b.beliefId))];
    if (rand() < 0.1) b.conflictsWith = [pick(rand, ownerIds.filter((id) => id !== b.beliefId))];
  }
  const set = shuffle(rand, mine);
  while (set.length > 0) await store.putBeliefs(owner, set.splice(0, 1 + Math.floor(rand() * 10)));
  await store.appendEpisodes(owner, ownerEpisodes.slice(12));
  await store.putSubjectAliases(owner, [{ alias: "Acme", subject: "Acme Corp" }, { alias: "Mel", subject: "Melanie" }]);
  for (const id of shuffle(rand, ownerIds).slice(0, 4)) await store.setPersonaEntry(owner, id);
  for (const o of outsiders) {
    const theirEpisodes = randomEpisodes(rand, 12, true);
    await store.appendEpisodes(o, theirEpisodes);
    const theirs = [...shuffle(rand, ownerIds).slice(0, 8), seededId(rand), seededId(rand)].map((id) => randomBelief(rand, id, theirEpisodes, true));
    await store.putBeliefs(o, theirs);
    await store.putSubjectAliases(o, [{ alias: "Acme", subject: "Priya" }]);
    await store.setPersonaEntry(o, theirs[0]!.beliefId);
  }
  return { owner, outsiders, ownerIds };
}

/** Join and aggregation methods switched off, one set at a time: each makes PostgreSQL plan the lexical statement another way (a sorted aggregate adds a group's rows in no fixed order). */
const PLANS = [["enable_hashagg"], ["enable_hashjoin"], ["enable_hashjoin", "enable_mergejoin"], ["enable_nestloop"], ["enable_hashagg", "enable_nestloop", "enable_hashjoin"]];

type ArmCall = readonly [string, (s: CandidateSource) => Promise<unknown>];

/** 30 random filters, each with a call per arm (lexical first), the same for the same `rand` state. */
function armProbes(rand: () => number, world: World, head: number, seed: number): { label: string; calls: ArmCall[] }[] {
  return Array.from({ length: 30 }, (_, q) => {
    const at = pick(rand, [...AS_OF, NOW]);
    const f = filterFor(world.owner, {
      query: {
        currentScope: pick(rand, SCOPES),
        asOf: rand() < 0.5 ? at : null,
        knownAt: rand() < 0.4 ? pick(rand, AS_OF) : null,
        includeSuperseded: rand() < 0.2,
        includeProvisional: rand() < 0.7,
        beliefTypes: rand() < 0.15 ? [pick(rand, TYPES)] : [],
      },
      ceiling: pick(rand, LEVELS),
      named: shuffle(rand, ["andy", "priya", "acme corp", "melanie"]).slice(0, Math.floor(rand() * 3)),
      excludePersonaHeld: rand() < 0.4,
    });
    const terms = words(rand, 1, 5);
    const lq = lexicalQuery(terms, {
      names: rand() < 0.5 ? ["andy", "priya"] : [],
      dates: rand() < 0.3 ? { years: [2026], months: [pick(rand, [1, 2, 3, 4, 5])] } : { years: [], months: [] },
    });
    const anchors = {
      subjects: shuffle(rand, ["andy", "priya", "acme corp", "user"]).slice(0, Math.floor(rand() * 3)),
      types: rand() < 0.5 ? [pick(rand, TYPES)] : [],
      typeWeight: RETRIEVAL_POLICY.typeAnchorWeight,
      owned: rand() < 0.4 ? RETRIEVAL_POLICY.ownedResources : null,
    };
    const cap = pick(rand, [3, 10, 200]);
    const after = Math.floor(rand() * (head + 1));
    const fuzzy = [pick(rand, ["melanei", "priyaa", "andyy", "acmee", "veetbott"])];
    const calls: ArmCall[] = [
      ["lexical", (s) => s.lexicalCandidates(f, lq, cap)],
      ["structured", (s) => s.structuredCandidates(f, anchors, cap)],
      ["delta", (s) => s.deltaCandidates(f, after, cap)],
      ["names", (s) => s.resolveNamedSubjects(f, ["andy", "acme corp", "melanie"], fuzzy, 0.4)],
      ["aliases", (s) => s.expandSubjectsEach(world.owner, ["Acme", "mel", "Priya", "nobody"])],
    ];
    return { label: `seed ${seed}, filter ${q}`, calls };
  });
}

/** More writes of every kind: new and replaced beliefs, rejections, persona changes, episodes, aliases. */
async function writeMore(store: MemoryStore, world: World, rand: () => number): Promise<void> {
  const { owner, ownerIds } = world;
  const eps = randomEpisodes(rand, 6);
  await store.appendEpisodes(owner, eps);
  const fresh = Array.from({ length: 6 }, () => randomBelief(rand, seededId(rand), eps));
  fresh[0]!.supersedes = [pick(rand, ownerIds)];
  await store.putBeliefs(owner, fresh);
  await store.putBeliefs(owner, [randomBelief(rand, pick(rand, ownerIds), eps)]);
  const target = pick(rand, ownerIds);
  await store.rejectBelief(owner, { rejectionId: seededId(rand), beliefId: target, kind: "not_true", correction: null, scope: "", reason: "" });
  const changed = pick(rand, ownerIds.filter((id) => id !== target));
  const correction = randomBelief(rand, seededId(rand), eps);
  await store.rejectBelief(owner, { rejectionId: seededId(rand), beliefId: changed, kind: "changed", correction: { ...correction, status: "active" }, scope: "", reason: "" });
  await store.removePersonaEntry(owner, pick(rand, ownerIds));
  await store.setPersonaEntry(owner, pick(rand, ownerIds));
  await store.putSubjectAliases(owner, [{ alias: "Pri", subject: "Priya" }]);
  ownerIds.push(...fresh.map((b) => b.beliefId), correction.beliefId);
}

interface Probe {
  kind: Moment | "search";
  ceiling: SensitivityLevel;
  query: ReturnType<typeof requested>;
  watermark: number | null;
}

function randomProbe(rand: () => number, head: number): Probe {
  const text = rand() < 0.4 ? pick(rand, QUESTIONS) : [...words(rand, 0, 4), ...(rand() < 0.3 ? [MARKER] : [])].join(" ") || null;
  const past = rand() < 0.35;
  return {
    kind: pick(rand, KINDS),
    ceiling: pick(rand, LEVELS),
    watermark: rand() < 0.5 ? Math.floor(rand() * (head + 1)) : null,
    query: requested({
      currentScope: pick(rand, SCOPES),
      text,
      subjects: shuffle(rand, [...SUBJECTS, "Acme", "Mel"]).slice(0, Math.floor(rand() * 3)),
      structuredBeliefTypes: rand() < 0.3 ? [pick(rand, TYPES)] : [],
      beliefTypes: rand() < 0.1 ? [pick(rand, TYPES)] : [],
      includeOwnedResources: rand() < 0.3,
      asOf: rand() < 0.8 ? pick(rand, AS_OF) : null,
      knownAt: past && rand() < 0.5 ? pick(rand, AS_OF) : null,
      includeSuperseded: rand() < 0.15,
      maxItems: rand() < 0.5 ? 0 : 1 + Math.floor(rand() * 20),
    }),
  };
}

/** One recall, drained, keeping every arm's outcome. */
async function run(deps: PipelineDeps, p: Principal, probe: Probe): Promise<{ arms: ArmOutcome[]; outcome: RecallOutcome }> {
  const kind = probe.kind;
  const context: RecallContext = {
    moment: kind === "search" ? "in_turn" : kind,
    sessionType: "interactive",
    contextWindowTokens: 0,
    snapshotWatermark: kind === "in_turn" ? probe.watermark : null,
    sessionId: "s-parity",
    runId: "run-1",
    turnId: "",
    surface: { surfaceId: "cli", sensitivityCeiling: probe.ceiling },
  };
  const pipeline = recall(deps, { principal: p, query: probe.query, context, kind, deadlineAt: Date.now() + 20_000, signal: new AbortController().signal });
  const arms: ArmOutcome[] = [];
  let step = await pipeline.next();
  while (!step.done) {
    arms.push(step.value);
    step = await pipeline.next();
  }
  return { arms, outcome: step.value };
}

/** Arm candidates as the port defines them: the index's also carry their rows' memos (ports/row-memo.ts), which SQL's cannot. */
function withoutMemos<T>(answer: T): T {
  if (!Array.isArray(answer)) return answer;
  return answer.map((c: unknown) => {
    if (c === null || typeof c !== "object" || !("memo" in c)) return c;
    const { memo: _memo, ...candidate } = c as { memo: unknown };
    return candidate;
  }) as T;
}

/** What must be equal between the two paths: everything but ids, latencies and arm finishing order. */
function comparable(r: { arms: ArmOutcome[]; outcome: RecallOutcome }) {
  const { traceId: _t, ...result } = r.outcome.result;
  const { id: _i, armLatenciesMs, ...trace } = r.outcome.trace;
  return {
    arms: [...r.arms]
      .sort((a, b) => (a.arm < b.arm ? -1 : 1))
      .map((o) => ({ arm: o.arm, degraded: o.degraded, candidates: o.candidates.map((c) => [c.belief, c.armScore]) })),
    result,
    trace: { ...trace, arms: Object.keys(armLatenciesMs ?? {}).sort() },
  };
}

describe.each(STORE_KINDS)("principal index parity with the SQL arms, property ($kind)", ({ open }) => {
  const store = useStore(open);

  it.each(SEEDS)("seed %i: the index answers every recall exactly as SQL does, before and after a delta", async (seed) => {
    const rand = prng(seed);
    const world = await writeWorld(store(), rand);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.load(world.owner);
    const sqlDeps = pipelineDeps(store(), { record: async (p, t) => void (await store().recordTrace(p, t)) }, () => NOW);
    const indexDeps: PipelineDeps = { ...sqlDeps, candidates: indexes };
    // A session snapshot, so in-turn recalls with a watermark have corrections to look up.
    await run(sqlDeps, world.owner, { kind: "snapshot", ceiling: SENSITIVITY.restricted, query: requested(), watermark: null });

    let compared = 0;
    for (const round of [0, 1]) {
      if (round === 1) {
        await writeMore(store(), world, rand);
        // Half the seeds catch up on the next recall (head moved), half through the write path.
        if (seed % 2 === 0) await indexes.refresh(world.owner);
      }
      const head = (await store().head(world.owner)).position;
      for (let q = 0; q < QUERIES_PER_ROUND; q++) {
        const probe = randomProbe(rand, head);
        const label = `seed ${seed}, round ${round}, probe ${q}: ${JSON.stringify(probe)}`;
        const fromSql = await run(sqlDeps, world.owner, probe);
        const fromIndex = await run(indexDeps, world.owner, probe);
        expect(comparable(fromIndex), label).toEqual(comparable(fromSql));
        expect(fromIndex.outcome.result.rendered, label).not.toContain(MARKER);
        compared += fromSql.outcome.result.items.length;
      }
    }
    expect(indexes.stats.hits).toBe(2 * QUERIES_PER_ROUND);
    expect(indexes.stats.sqlFallbacks).toBe(0);
    expect(indexes.stats.deltas).toBeGreaterThan(0);
    // Not vacuous: the recalls found beliefs.
    expect(compared).toBeGreaterThan(0);
  });

  it.each(SEEDS)("seed %i: every arm gives the same candidates and scores under random filters, historical ones too", async (seed) => {
    const rand = prng(seed + 100);
    const world = await writeWorld(store(), rand);
    await writeMore(store(), world, rand);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.load(world.owner);
    const head = await store().head(world.owner);
    const index = await indexes.sourceFor(world.owner, head);
    const sql: CandidateSource = store().candidates;
    expect(index).not.toBe(sql);
    let nonEmpty = 0;
    for (const probe of armProbes(rand, world, head.position, seed)) {
      for (const [what, call] of probe.calls) {
        const expected = await call(sql);
        expect(withoutMemos(await call(index)), `${probe.label} ${what}`).toEqual(expected);
        if (Array.isArray(expected) && expected.length > 0) nonEmpty += 1;
      }
    }
    expect(nonEmpty).toBeGreaterThan(10);
  });

  // Forced plans are slow on PostgreSQL: 27–40 s a seed alone on a 2-core machine, past the default
  // 90 s beside the rest of the suite.
  it.each(SEEDS)("seed %i: the SQL lexical arm scores the same whatever plan PostgreSQL picks", { timeout: 300_000 }, async (seed) => {
    // The float sums must not follow the plan: under load, an ANALYZE once changed it and moved a
    // score's 12th decimal (seed 12, filter 22), so SQL and the index disagreed.
    const rand = prng(seed + 100);
    const world = await writeWorld(store(), rand);
    await writeMore(store(), world, rand);
    const head = await store().head(world.owner);
    const probes = armProbes(rand, world, head.position, seed).map((p) => ({ label: p.label, lexical: p.calls[0]![1] }));
    // Answered first, outside the transactions: the embedded store has one connection.
    const expected: unknown[] = [];
    for (const probe of probes) expected.push(await probe.lexical(store().candidates));
    for (const settings of PLANS) {
      await store().db.transaction(async (tx) => {
        for (const setting of settings) await tx.query(`SET LOCAL ${setting} = off`);
        const planned = new SqlCandidateSource(tx);
        for (const [i, probe] of probes.entries()) {
          expect(await probe.lexical(planned), `${probe.label} lexical with ${settings.join(", ")} off`).toEqual(expected[i]);
        }
      });
    }
  });

  it("feedback (citations, the uncited sweep) and erasure reach the index through the change feed", async () => {
    const rand = prng(21);
    const world = await writeWorld(store(), rand);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.start();
    try {
      await indexes.load(world.owner);
      const head = await store().head(world.owner);
      const index = await indexes.sourceFor(world.owner, head);
      const all = async (s: CandidateSource) => withoutMemos(await s.structuredCandidates(filterFor(world.owner), { subjects: [], types: [], typeWeight: 0.25 }, 1000));
      const sameAsSql = async () => {
        for (let i = 0; i < 100; i++) {
          if (JSON.stringify(await all(index)) === JSON.stringify(await all(store().candidates))) return true;
          await new Promise((r) => setTimeout(r, 50));
        }
        return false;
      };
      const sqlDeps = pipelineDeps(store(), { record: async (p, t) => void (await store().recordTrace(p, t)) }, () => NOW);
      const snap = await run(sqlDeps, world.owner, { kind: "snapshot", ceiling: SENSITIVITY.restricted, query: requested(), watermark: null });
      const cited = snap.outcome.result.items.slice(0, 2).map((i) => i.beliefId);
      expect(cited.length).toBeGreaterThan(0);
      const before = JSON.stringify(await all(index));
      // Utility moves without the head: only the notification can tell the index.
      await store().recordCitations(world.owner, snap.outcome.trace.id, cited);
      expect(JSON.stringify(await all(store().candidates))).not.toBe(before);
      expect(await sameAsSql()).toBe(true);
      const swept = await sweepOnce(store().traces, new Date(NOW.getTime() + 400 * DAY_MS), { batch: 100, maxBatches: 5, uncitedWindowHours: 1 });
      expect(swept.charged).toBeGreaterThan(0);
      expect(await sameAsSql()).toBe(true);
      // An erasure notifies with ids null: the principal's index is dropped, SQL answers until it reloads.
      await store().db.query("SELECT pg_notify($1, json_build_array($2::text, $3::text, NULL)::text)", [ROWS_CHANNEL, world.owner.tenantId, world.owner.principalId]);
      for (let i = 0; i < 100 && indexes.stats.principals > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await indexes.sourceFor(world.owner, head)).toBe(store().candidates);
    } finally {
      await indexes.stop();
    }
  });

  it("the index holds one principal: another identity is refused, and the router never crosses principals", async () => {
    const rand = prng(7);
    const world = await writeWorld(store(), rand);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.load(world.owner);
    const ownerSource = await indexes.sourceFor(world.owner, await store().head(world.owner));
    for (const other of world.outsiders) {
      // The owner's index refuses the outsider's filter outright.
      await expect(ownerSource.lexicalCandidates(filterFor(other), lexicalQuery([MARKER]), 200)).rejects.toThrow(/another principal/);
      await expect(ownerSource.expandSubjectsEach(other, ["acme"])).rejects.toThrow(/another principal/);
      // An outsider's recall is routed to SQL (not loaded), never to the owner's index.
      expect(await indexes.sourceFor(other, await store().head(other))).toBe(store().candidates);
      await indexes.load(other);
      const theirs = await indexes.sourceFor(other, await store().head(other));
      expect(theirs).not.toBe(ownerSource);
      // Zero results of the other's from the owner's index, whatever is asked.
      const found = [
        ...(await ownerSource.lexicalCandidates(filterFor(world.owner), lexicalQuery([MARKER, ...WORDS]), 200)),
        ...(await ownerSource.structuredCandidates(filterFor(world.owner), { subjects: [], types: [], typeWeight: 0.25 }, 1000)),
        ...(await ownerSource.deltaCandidates(filterFor(world.owner), 0, 1000)),
      ];
      expect(found.length).toBeGreaterThan(0);
      for (const c of found) {
        expect(world.ownerIds).toContain(c.belief.beliefId);
        expect(c.belief.statement).not.toContain(MARKER);
      }
      const aliases = await ownerSource.expandSubjectsEach(world.owner, ["acme"]);
      expect(aliases.get("acme")).toEqual(["acme", "acme corp"]);
    }
  });
});

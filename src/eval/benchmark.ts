import { createHash } from "node:crypto";
import type { Principal, RecallResult, SensitivityLevel } from "../domain/model.js";
import { recall, type PipelineDeps, type RecallOutcome } from "../recall/pipeline.js";
import { RETRIEVAL_POLICY, type RetrievalPolicy } from "../recall/policy.js";
import { requestedQuery, type RequestedQuery } from "../recall/query-former.js";
import type { MemoryStore } from "../store/memory-store.js";
import { fixtureBeliefId, type BenchmarkFixture, type FixtureProbe, type FixtureSession, type FixtureWrite } from "./benchmark-fixture.js";
import { benchmarkMetrics, type BenchmarkMetrics } from "./benchmark-metrics.js";
import type { SemanticSearch } from "../recall/arms/semantic.js";

/** The semantic arm for a benchmark run (the paraphrase set): its search, and how to embed what was written. */
export interface BenchmarkSemantic {
  search: SemanticSearch;
  /** Embeds every belief written so far; called after the load and after each mid-session write. */
  embedAll(): Promise<void>;
}

/**
 * The deterministic benchmark (`npm run eval`): loads the fixture into a
 * fresh store and runs every probe through the real pipeline on the
 * fixture's fixed clock, session by session, with the fixture's mid-session
 * writes between probes. Nothing in the result depends on the wall clock,
 * the machine or the order of unrelated rows, so the same code and fixture
 * always give the same result (the committed baseline).
 */

/** One probe's outcome, in fixture keys. */
export interface ProbeRow {
  id: string;
  session: string;
  moment: FixtureProbe["moment"];
  project: string;
  transfer: boolean;
  /** Returned keys in rendered order; "!blocked" marks a [BLOCKED] placeholder. */
  returned: string[];
  /** Expected keys returned. */
  hits: string[];
  /** Expected keys not returned. */
  missed: string[];
  /** Forbidden keys returned (policy failures). */
  forbiddenReturned: string[];
  /** Poisoned keys returned without [BLOCKED] (policy failures). */
  poisonedUnblocked: string[];
  /** Returned keys neither expected nor acceptable (noise). */
  noise: string[];
  /** Returned, unblocked keys carried from another project, rendered "(learned in …)". */
  carried: string[];
  /** Carried keys rendered without their origin attribution (a transfer-precision failure). */
  carriedUnattributed: string[];
  /** Keys of snapshot beliefs the recall delta corrected (in-turn only). */
  corrections: string[];
  tokens: number;
  /** First 16 hex digits of the rendered bytes' sha256: any rendering change shows. */
  rendered: string;
}

/** A later turn of a session that opened with a snapshot: how much of that prefix a re-open would keep. */
export interface ReopenSample {
  session: string;
  probe: string;
  /** Bytes of the session-open snapshot. */
  prefixBytes: number;
  /** Leading bytes a re-opened snapshot shares with it. */
  stableBytes: number;
  identical: boolean;
}

/** A session that opened with a snapshot: its beliefs and what the session's in-turn probes did with them. */
export interface SnapshotSession {
  session: string;
  snapshot: string[];
  /** Snapshot beliefs a probe of the session needed (what the model would cite). */
  used: string[];
  /**
   * In-turn results that were snapshot-eligible at open (durable type, active, not persona-held, not
   * written since) but not in the snapshot.
   */
  misses: string[];
}

export interface BenchmarkResult {
  policy: string;
  fixtureSha256: string;
  metrics: BenchmarkMetrics;
  probes: ProbeRow[];
  sessions: SnapshotSession[];
  reopens: ReopenSample[];
}

export async function runBenchmark(
  fixture: BenchmarkFixture,
  store: MemoryStore,
  policy: RetrievalPolicy = RETRIEVAL_POLICY,
  semantic?: BenchmarkSemantic,
): Promise<BenchmarkResult> {
  await loadFixture(fixture, store);
  await semantic?.embedAll();
  const probes: ProbeRow[] = [];
  const sessions: SnapshotSession[] = [];
  const reopens: ReopenSample[] = [];
  for (const session of fixture.sessions) {
    const run = await runSession(fixture, store, policy, session, semantic);
    probes.push(...run.probes);
    reopens.push(...run.reopens);
    if (run.snapshot) sessions.push(run.snapshot);
  }
  return {
    policy: policy.version,
    fixtureSha256: fixture.sha256,
    metrics: benchmarkMetrics(probes, sessions, reopens),
    probes,
    sessions,
    reopens,
  };
}

/** Writes the fixture's principals (beliefs, episodes, aliases, persona entries) into a fresh store. */
export async function loadFixture(fixture: BenchmarkFixture, store: MemoryStore): Promise<void> {
  for (const p of fixture.principals) {
    if (p.episodes.length > 0) await store.appendEpisodes(p.principal, p.episodes);
    await store.putBeliefs(p.principal, p.beliefs);
    if (p.aliases.length > 0) await store.putSubjectAliases(p.principal, p.aliases);
    for (const k of p.personaHeld) await store.setPersonaEntry(p.principal, fixtureBeliefId(k));
    await pinLastWrite(store, p.principal, fixture.clock);
  }
  await store.analyzeIfEmbedded();
}

/** Applies a mid-session write at its time. */
export async function applyWrite(store: MemoryStore, principal: Principal, write: FixtureWrite): Promise<void> {
  await store.putBeliefs(principal, write.beliefs);
  await pinLastWrite(store, principal, write.at);
}

/** The pipeline's dependencies on the benchmark's clock; traces go straight to the store. */
export function benchmarkDeps(store: MemoryStore, policy: RetrievalPolicy, clock: () => Date, semantic?: SemanticSearch): PipelineDeps {
  return {
    store,
    // Written to the store: the recall delta finds the session's snapshot through its trace.
    traces: { record: async (p, t) => void (await store.recordTrace(p, t)) },
    policy,
    clock,
    traceRetentionHours: 24,
    heads: store,
    ...(semantic ? { semantic } : {}),
  };
}

async function runSession(fixture: BenchmarkFixture, store: MemoryStore, policy: RetrievalPolicy, session: FixtureSession, semantic?: BenchmarkSemantic) {
  const probes: ProbeRow[] = [];
  const reopens: ReopenSample[] = [];
  let clock = session.start;
  let opened: { probe: FixtureProbe; result: RecallResult } | null = null;
  const needed = new Set<string>();
  const misses = new Set<string>();
  // Not snapshot-eligible at open, so never a miss: persona-held beliefs, and beliefs written since.
  const ineligible = new Set(fixture.principals.find((p) => samePrincipal(p.principal, session.principal))?.personaHeld ?? []);
  const durable = new Set(policy.durableTypes);
  const deps = benchmarkDeps(store, policy, () => clock, semantic?.search);

  for (const step of session.steps) {
    if (step.kind === "write") {
      clock = step.at;
      await applyWrite(store, session.principal, step);
      await semantic?.embedAll();
      if (opened) for (const b of step.beliefs) ineligible.add(keyOf(fixture, b.beliefId));
      continue;
    }
    const { result } = await runProbe(deps, session, step, {
      snapshotWatermark: step.moment === "in_turn" ? (opened?.result.snapshotWatermark ?? null) : null,
      sessionId: `bench/${session.id}`,
    });
    probes.push(probeRow(fixture, session, step, result));
    if (step.moment === "snapshot") {
      opened ??= { probe: step, result };
      continue;
    }
    if (!opened) continue;
    for (const k of step.expected) needed.add(k);
    // What a runtime that re-opened the snapshot now would put in the prefix (its own session: no trace of ours moves).
    const { result: again } = await runProbe(deps, session, opened.probe, { snapshotWatermark: null, sessionId: `bench/${session.id}/reopen/${step.id}` });
    reopens.push({
      session: session.id,
      probe: step.id,
      prefixBytes: Buffer.byteLength(opened.result.rendered),
      stableBytes: commonPrefixBytes(opened.result.rendered, again.rendered),
      identical: again.rendered === opened.result.rendered,
    });
    if (step.moment === "in_turn") {
      const inSnapshot = new Set(opened.result.items.map((i) => i.beliefId));
      for (const item of result.items) {
        const k = keyOf(fixture, item.beliefId);
        if (!inSnapshot.has(item.beliefId) && !ineligible.has(k) && durable.has(item.beliefType) && item.status === "active") misses.add(k);
      }
    }
  }
  const snapshotKeys = opened ? opened.result.items.map((i) => keyOf(fixture, i.beliefId)) : [];
  return {
    probes,
    reopens,
    snapshot: opened
      ? { session: session.id, snapshot: snapshotKeys, used: snapshotKeys.filter((k) => needed.has(k)), misses: [...misses].sort() }
      : null,
  };
}

/** One probe through the real pipeline, as a runtime would send it; the turn id is the probe's id. */
export async function runProbe(
  deps: PipelineDeps,
  session: Pick<FixtureSession, "id" | "principal" | "sessionType">,
  probe: FixtureProbe,
  o: { snapshotWatermark: number | null; sessionId: string; ceiling?: SensitivityLevel; turnId?: string },
): Promise<RecallOutcome> {
  const { snapshotWatermark, sessionId } = o;
  const moment = probe.moment === "search" ? "in_turn" : probe.moment;
  const gen = recall(deps, {
    principal: session.principal,
    query: probeQuery(probe),
    kind: probe.moment,
    // Generous: the benchmark measures what is ranked, never a deadline.
    deadlineAt: Date.now() + 60_000,
    signal: new AbortController().signal,
    context: {
      moment,
      sessionType: probe.moment === "child_run" ? "child" : session.sessionType,
      contextWindowTokens: 0,
      snapshotWatermark,
      sessionId,
      runId: probe.moment === "child_run" ? `${session.id}/child` : "",
      turnId: o.turnId ?? probe.id,
      surface: { surfaceId: "benchmark", sensitivityCeiling: o.ceiling ?? probe.ceiling },
    },
  });
  let step = await gen.next();
  while (!step.done) step = await gen.next();
  if (step.value.result.armsDegraded.length > 0) {
    throw new Error(`probe ${probe.id}: arms degraded (${step.value.result.armsDegraded.join(", ")}); the result would not be deterministic`);
  }
  return step.value;
}

function probeQuery(probe: FixtureProbe): RequestedQuery {
  return requestedQuery({
    currentScope: probe.project,
    text: probe.text,
    subjects: probe.subjects,
    structuredBeliefTypes: probe.types,
    asOf: probe.asOf,
    ...(probe.minScore !== undefined ? { minScore: probe.minScore } : {}),
  });
}

function probeRow(fixture: BenchmarkFixture, session: FixtureSession, probe: FixtureProbe, result: RecallResult): ProbeRow {
  const keys = result.items.map((i) => keyOf(fixture, i.beliefId));
  // A [BLOCKED] placeholder tells the model nothing: it is returned, but no hit.
  const shown = new Set(result.items.filter((i) => !i.blocked).map((i) => keyOf(fixture, i.beliefId)));
  const relevant = new Set([...probe.expected, ...probe.acceptable]);
  const forbidden = new Set(probe.forbidden);
  const lines = new Map(result.items.map((i) => [i.beliefId, lineOf(result.rendered, i.beliefId)]));
  const carried = result.items.filter((i) => i.carried && !i.blocked);
  return {
    id: probe.id,
    session: session.id,
    moment: probe.moment,
    project: probe.project,
    transfer: probe.transfer,
    returned: result.items.map((i, n) => (i.blocked ? `${keys[n]}!blocked` : keys[n]!)),
    hits: probe.expected.filter((k) => shown.has(k)),
    missed: probe.expected.filter((k) => !shown.has(k)),
    forbiddenReturned: keys.filter((k) => forbidden.has(k)),
    poisonedUnblocked: result.items.filter((i) => !i.blocked && fixture.poisoned.has(keyOf(fixture, i.beliefId))).map((i) => keyOf(fixture, i.beliefId)),
    noise: keys.filter((k) => !relevant.has(k)),
    carried: carried.map((i) => keyOf(fixture, i.beliefId)),
    carriedUnattributed: carried.filter((i) => !(lines.get(i.beliefId) ?? "").includes(`(learned in ${i.originScope})`)).map((i) => keyOf(fixture, i.beliefId)),
    corrections: result.corrections.map((c) => keyOf(fixture, c.beliefId)).sort(),
    tokens: result.tokens,
    rendered: createHash("sha256").update(result.rendered, "utf8").digest("hex").slice(0, 16),
  };
}

/** The rendered line of a belief, found by its short id. */
function lineOf(rendered: string, beliefId: string): string {
  const short = `[m:${beliefId.replace(/-/g, "").slice(0, 8)}]`;
  return rendered.split("\n").find((l) => l.trimStart().startsWith(short)) ?? "";
}

export function commonPrefixBytes(a: string, b: string): number {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n += 1;
  return n;
}

function samePrincipal(a: Principal, b: Principal): boolean {
  return a.tenantId === b.tenantId && a.principalId === b.principalId;
}

function keyOf(fixture: BenchmarkFixture, beliefId: string): string {
  // A belief the fixture never defined can only have crossed from outside it: name it plainly.
  return fixture.keyOf.get(beliefId) ?? `unknown:${beliefId}`;
}

/**
 * The head's updated_at is the time of the principal's last write and the
 * as_of a recall without one renders and ranks with. The store sets it from
 * the database clock; the benchmark pins it to the fixture's clock so that
 * as_of, ages and bytes are the same on every run.
 */
export async function pinLastWrite(store: MemoryStore, p: Principal, at: Date): Promise<void> {
  await store.db.query("UPDATE principal_heads SET updated_at = $3::timestamptz WHERE tenant_id = $1 AND principal_id = $2", [
    p.tenantId,
    p.principalId,
    at.toISOString(),
  ]);
}

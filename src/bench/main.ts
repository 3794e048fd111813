#!/usr/bin/env node
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { benchDatabaseUrl, embeddedGenerationParams, generationParams, measuredPrincipals, prepareEmbeddedStore, prepareStore } from "./generate.js";
import { createPostgresClient } from "../store/postgres/postgres-client.js";
import { measureAlternatives } from "./alternatives.js";
import { firstCalls, formatFirstCalls, restartedSessionCall, type FirstCall } from "./first-calls.js";
import { formatGcOverlap, gcOverlapInRounds, type GcPause, type TimedCall } from "./gc-overlap.js";
import { connectBench } from "./grpc-client.js";
import { formatIndexBytes, retainedIndexBytes, type IndexBytes } from "./index-bytes.js";
import { runLoad } from "./load.js";
import { formatIdleRss, formatLoadedRss, idleRss, loadedRss, STORE_KINDS, type IdleRss } from "./memory-figures.js";
import {
  FLOOR_SCENARIO,
  formatAlternatives,
  formatGrowth,
  formatTable,
  formatTargets,
  judgeCostTargets,
  judgeTargets,
  met,
  throughputScaling,
  type ScenarioResult,
} from "./report.js";
import {
  cachedSnapshotOp,
  coldSnapshotOp,
  healthScenario,
  inTurnOp,
  openInTurnSessions,
  rawLexicalOp,
  searchOp,
  type Checks,
  type MeasuredPrincipal,
  type Scenario,
} from "./scenarios.js";
import { CLI, gcRecording, indexesLoaded, rssMiB, startSidecar } from "./sidecar-process.js";
import { medianOfRounds, type LatencySummary } from "./stats.js";

/**
 * `npm run bench`: the latency and cost benchmark (issues 7, 11 and 37). Not
 * a test: it prints figures. Generates (or reuses) a 1M-belief PostgreSQL
 * store and a 70k-belief embedded one, starts the real sidecar process on
 * each, and measures it over gRPC as a black box: beside its own health
 * check (the floor of any call on the channel), the raw SQL it wraps and
 * what a user would pick instead; and what it costs in memory.
 */

const USAGE = `usage: npm run bench -- [options]

  --database-url URL   bench database (default $RECALL_BENCH_DATABASE_URL or
                       postgres://postgres@127.0.0.1:5432/recall_bench, recall_bench_quick with --quick);
                       created, and dropped on --regenerate
  --regenerate         drop and generate the data again even if the recorded parameters match
  --beliefs N          total beliefs (default 1000000)
  --heavy N            beliefs of the main measured principal and of nine more of its size (default 10000);
                       a 1k and a 100k principal are measured besides
  --principals N       principals sharing the other beliefs (default 2000)
  --seed N             data and query seed (default 7)
  --iterations N       measured calls per scenario, concurrency and round (default 300)
  --warmup N           unmeasured calls before each of those (default 30)
  --rounds N           rounds; each figure is the median over rounds (default 3)
  --concurrency LIST   comma-separated (default 1,8)
  --quick              --iterations 60 --warmup 10 --rounds 1 --beliefs 220000 --principals 200: a few minutes
  --pool-max N         the sidecar's RECALL_DB_POOL_MAX (default: the sidecar's own default)
  --log-level LEVEL    the sidecar's RECALL_LOG_LEVEL: info (default, as deployed: one line per call), debug or trace
  --embedded-dir DIR   the embedded (PGlite) bench store (default ./.recall-bench/embedded); generated when missing
  --no-embedded        skip the embedded store
  --only-main          only the 1M store's main sidecar (no memory figure, no embedded store)
  --cpu-prof DIR       write a CPU profile of the main sidecar to DIR (node --cpu-prof)
  --scenarios LIST     names of the 1M store's scenarios to run, separated by ";" (the floor always runs),
                       e.g. "in-turn recall;snapshot open, cold"; implies --only-main
  --json FILE          also write every figure as JSON`;

interface Options {
  databaseUrl: string;
  regenerate: boolean;
  beliefs: number;
  heavy: number;
  principals: number;
  seed: number;
  iterations: number;
  warmup: number;
  rounds: number;
  concurrency: number[];
  poolMax: string | undefined;
  logLevel: string;
  json: string | undefined;
  embedded: boolean;
  embeddedDir: string;
  /** The memory figures (index bytes, idle RSS, a sidecar with ten 10k principals) and the alternatives. */
  memory: boolean;
  cpuProfileDir: string | undefined;
  /** Only these 1M-store scenarios (and the floor); undefined runs all. */
  scenarios: string[] | undefined;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      "database-url": { type: "string" },
      regenerate: { type: "boolean", default: false },
      beliefs: { type: "string" },
      heavy: { type: "string" },
      principals: { type: "string" },
      seed: { type: "string" },
      iterations: { type: "string" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      concurrency: { type: "string" },
      quick: { type: "boolean", default: false },
      "pool-max": { type: "string" },
      "log-level": { type: "string" },
      json: { type: "string" },
      "embedded-dir": { type: "string" },
      "no-embedded": { type: "boolean", default: false },
      "only-main": { type: "boolean", default: false },
      "cpu-prof": { type: "string" },
      scenarios: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return null;
  const int = (name: string, raw: string | undefined, fallback: number, min = 1) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: must be an integer ≥ ${min}`);
    return n;
  };
  const oneOf = (name: string, raw: string, allowed: string[]) => {
    if (!allowed.includes(raw)) throw new Error(`--${name}: must be one of ${allowed.join(", ")}`);
    return raw;
  };
  const quick = values.quick;
  const scenarios = values.scenarios?.split(";").map((n) => n.trim()).filter((n) => n !== "");
  const onlyMain = values["only-main"] || scenarios !== undefined;
  const concurrency = (values.concurrency ?? "1,8").split(",").map((c) => int("concurrency", c, 1));
  return {
    databaseUrl: benchDatabaseUrl(values["database-url"], quick),
    regenerate: values.regenerate,
    // Quick: the measured principals (201k beliefs) and a few others, generated in a minute, not ten.
    beliefs: int("beliefs", values.beliefs, quick ? 220_000 : 1_000_000),
    heavy: int("heavy", values.heavy, 10_000),
    principals: int("principals", values.principals, quick ? 200 : 2_000),
    seed: int("seed", values.seed, 7, 0),
    iterations: int("iterations", values.iterations, quick ? 60 : 300),
    warmup: int("warmup", values.warmup, quick ? 10 : 30, 0),
    rounds: int("rounds", values.rounds, quick ? 1 : 3),
    concurrency,
    poolMax: values["pool-max"],
    // The bench waits for the sidecar's "listening" line, which is logged at info.
    logLevel: oneOf("log-level", values["log-level"] ?? "info", ["info", "debug", "trace"]),
    json: values.json,
    embedded: !values["no-embedded"] && !onlyMain,
    memory: !onlyMain,
    cpuProfileDir: values["cpu-prof"],
    scenarios,
    embeddedDir: values["embedded-dir"] ?? ".recall-bench/embedded",
  };
}

async function machineInfo(sql: postgres.Sql): Promise<Record<string, string>> {
  const [pg] = await sql<{ version: string; shared_buffers: string }[]>`
    SELECT split_part(version(), ' on ', 1) AS version, current_setting('shared_buffers') AS shared_buffers`;
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? "unknown"} × ${cpus.length}`,
    ram: `${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB`,
    node: process.version,
    postgresql: `${pg?.version ?? "unknown"} (shared_buffers ${pg?.shared_buffers ?? "?"})`,
    os: `${os.type()} ${os.release()}`,
    load: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  };
}

/** p50/p95 of each arm's recorded latency, per kind of call, from the traces of this run (the bench truncates them first). */
async function armLatencies(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ kind: string; arm: string; n: number; p50: number; p95: number }[]>`
    SELECT kind, arm, count(*)::int AS n,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_disc(0.95) WITHIN GROUP (ORDER BY ms) AS p95
    FROM (
      SELECT CASE WHEN t.tool <> '' THEN 'search' ELSE t.moment END AS kind, a.key AS arm, a.value::int AS ms
      FROM recall_traces t, jsonb_each_text(t.arm_latencies_ms) a
    ) x
    GROUP BY kind, arm ORDER BY kind, arm`;
  const kinds = [...new Set(rows.map((r) => r.kind))];
  return kinds.map((kind) => {
    const arms = rows.filter((r) => r.kind === kind);
    return `  ${kind} (${arms[0]!.n} traces): ${arms.map((r) => `${r.arm} p50 ${r.p50} / p95 ${r.p95} ms`).join("; ")}`;
  });
}

/** For each named scenario, which of its calls met a collector pause of the sidecar (gc-overlap.ts). */
function gcPauseLines(pauses: GcPause[] | null, timed: Map<string, TimedCall[][]>, group: string, scenarios: readonly string[]): string[] {
  if (pauses === null) return ["  no record (the sidecar did not write one)"];
  return scenarios.flatMap((name) => {
    const rounds = timed.get(`${group}\u0000${name}`) ?? [];
    return rounds.length === 0 ? [] : formatGcOverlap(`  ${name}`, gcOverlapInRounds(rounds, pauses)).split("\n");
  });
}

/** Runs every scenario at every concurrency it takes, `rounds` times interleaved; each figure is the median over rounds. */
async function measure(
  group: string,
  scenarios: readonly Scenario[],
  options: Options,
  log: (line: string) => void,
  state: { seq: number; firstErrors: Map<string, string>; timed: Map<string, TimedCall[][]> },
): Promise<ScenarioResult[]> {
  const perRound = new Map<string, LatencySummary[]>();
  const setUp = new Set<string>();
  for (let round = 1; round <= options.rounds; round += 1) {
    for (const concurrency of options.concurrency) {
      for (const s of scenarios) {
        if (s.concurrencies && !s.concurrencies.includes(concurrency)) continue;
        if (s.setup && !setUp.has(s.name)) {
          setUp.add(s.name);
          await s.setup();
        }
        log(`${group}, round ${round}/${options.rounds}, concurrency ${concurrency}: ${s.name}`);
        const run = await runLoad(s.op, { iterations: options.iterations, concurrency, warmup: options.warmup, firstSeq: state.seq });
        state.seq = run.nextSeq;
        // Each round's calls at the lowest concurrency, for the collector-pause report (gcPauseLines).
        if (concurrency === options.concurrency[0]) {
          const timedKey = `${group}\u0000${s.name}`;
          state.timed.set(timedKey, [...(state.timed.get(timedKey) ?? []), run.calls]);
        }
        const key = `${s.name}\u0000${concurrency}`;
        perRound.set(key, [...(perRound.get(key) ?? []), run.summary]);
        const label = `${group}: ${s.name}`;
        if (run.firstError && !state.firstErrors.has(label)) state.firstErrors.set(label, run.firstError);
      }
    }
  }
  const results: ScenarioResult[] = [];
  for (const concurrency of options.concurrency) {
    for (const s of scenarios) {
      const rounds = perRound.get(`${s.name}\u0000${concurrency}`);
      if (rounds) results.push({ scenario: s.name, group, concurrency, summary: medianOfRounds(rounds), note: s.note ?? "" });
    }
  }
  return results;
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm run bench does)`);
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const params = generationParams({
    beliefs: options.beliefs,
    measured: measuredPrincipals(options.heavy),
    principals: options.principals,
    seed: options.seed,
  });
  const store = await prepareStore(options.databaseUrl, params, { force: options.regenerate, log });
  if (!store.reused) log(`generated in ${store.generationSeconds.toFixed(0)} s`);
  const who = (principal: string): MeasuredPrincipal => ({ principal, head: store.heads.get(principal) ?? 0 });
  const [main10k, small, large, ...others10k] = params.measured.map((m) => who(m.principal)) as [MeasuredPrincipal, ...MeasuredPrincipal[]];
  const size = (p: MeasuredPrincipal) => (params.measured.find((m) => m.principal === p.principal)!.beliefs / 1000).toFixed(0) + "k";

  const sql = postgres(options.databaseUrl, { max: Math.max(...options.concurrency), prepare: true, onnotice: () => {} });
  const machine = await machineInfo(sql);
  const base = options.concurrency[0]!;
  const checks: Checks = { degraded: 0, notFromCache: 0, coldFromCache: 0 };
  const state = { seq: 1, firstErrors: new Map<string, string>(), timed: new Map<string, TimedCall[][]>() };
  const sidecarEnv = (extra: Record<string, string>) => ({
    RECALL_LOG_LEVEL: options.logLevel,
    ...(options.poolMax ? { RECALL_DB_POOL_MAX: options.poolMax } : {}),
    ...extra,
  });
  const PG = `${params.beliefs >= 1_000_000 ? `${params.beliefs / 1_000_000}M` : `${Math.round(params.beliefs / 1000)}k`} store (PostgreSQL)`;
  const EMBEDDED = "embedded store (PGlite)";

  // 1. The 1M store: cold first calls, then every scenario.
  log("starting the sidecar");
  const gc = gcRecording("main");
  // Its data directory keeps the warm list it writes at stop, for the restart measured after it.
  const warmDir = await mkdtemp(join(tmpdir(), "recall-bench-warm-"));
  const mainEnv = { RECALL_DATABASE_URL: options.databaseUrl, RECALL_DATA_DIR: warmDir, RECALL_INDEX_WARM: "on" };
  const sidecar = await startSidecar(sidecarEnv({ ...mainEnv, ...gc.env }), options.cpuProfileDir, { nodeFlags: gc.nodeFlags });
  const client = connectBench(sidecar.address, { tenant: params.tenant, principal: main10k.principal }, 2_000);
  let results: ScenarioResult[];
  let cold: FirstCall[];
  let loads: string[];
  let held = 0;
  let peakRss = NaN;
  try {
    const wanted = (name: string) => name === FLOOR_SCENARIO || options.scenarios === undefined || options.scenarios.includes(name);
    const sizes = [small!, large!].flatMap((p): Scenario[] => [
      { name: `in-turn recall, ${size(p)}`, concurrencies: [base], op: inTurnOp(client, p, options.seed, checks), setup: openInTurnSessions(client, p, options.seed) },
      { name: `search, ${size(p)}`, concurrencies: [base], op: searchOp(client, p, options.seed, checks) },
    ]);
    const scenarios: Scenario[] = [
      healthScenario(FLOOR_SCENARIO, client),
      { name: "SELECT 1 (PostgreSQL)", note: "postgres.js round trip", op: async () => void (await sql.unsafe("SELECT 1", [], { prepare: true })) },
      {
        name: "raw lexical SQL",
        note: "postgres.js, no sidecar",
        op: rawLexicalOp((text, p) => sql.unsafe(text, p as postgres.ParameterOrJSON<never>[], { prepare: true }), params.tenant, main10k, options.seed),
      },
      {
        name: "in-turn recall",
        note: `${size(main10k)} principal`,
        op: inTurnOp(client, main10k, options.seed, checks),
        setup: openInTurnSessions(client, main10k, options.seed),
      },
      { name: "snapshot open, cold", note: "a cache miss each call", op: coldSnapshotOp(client, main10k, options.seed, checks) },
      { name: "snapshot open, cached", note: "from_cache checked", op: cachedSnapshotOp(client, main10k, options.seed, checks) },
      { name: "search", note: `${size(main10k)} principal`, op: searchOp(client, main10k, options.seed, checks) },
      ...sizes,
    ].filter((s) => wanted(s.name));
    // The first calls of the principals measured: the 1k and 100k ones only when one of their scenarios runs.
    const measuredOthers = [small!, large!].filter((p) => scenarios.some((s) => s.name.endsWith(`, ${size(p)}`)) || options.scenarios === undefined);
    cold = await firstCalls([
      { label: `first in-turn recall after start-up, ${size(main10k)} principal`, op: () => inTurnOp(client, main10k, options.seed, checks)(0) },
      { label: `its second call`, op: () => inTurnOp(client, main10k, options.seed, checks)(1) },
      ...measuredOthers.map((p) => ({ label: `first in-turn recall of the ${size(p)} principal`, op: () => inTurnOp(client, p, options.seed, checks)(0) })),
    ]);
    // The scenarios measure the steady state: the indexes those first calls started loading, loaded.
    held = 1 + measuredOthers.length;
    loads = [`  background index loads: ${await indexesLoaded(sidecar.address, held, 120_000)}`];
    results = await measure(PG, scenarios, options, log, state);
  } finally {
    peakRss = await rssMiB(sidecar.child.pid!).catch(() => NaN);
    client.close();
    await sidecar.stop();
  }
  const gcLines = gcPauseLines(await gc.read(), state.timed, PG, ["in-turn recall", "search"]);
  // After the stop: the sidecar flushes its queued traces on the way out.
  const arms = await armLatencies(sql);
  // What a user would pick instead, over the same principal's statements, with the sidecar stopped.
  const alternatives = options.memory
    ? await measureAlternatives((text, p) => sql.unsafe(text, p as postgres.ParameterOrJSON<never>[], { prepare: true }), params.tenant, main10k, options.seed, options)
    : { results: [], lines: [] };
  await sql.end({ timeout: 5 });
  // A session that outlives its sidecar: the 100k in-turn scenario opened bench-s0 with a snapshot,
  // so a restarted sidecar's first recall in it looks up that snapshot's corrections on SQL.
  if (options.scenarios === undefined || options.scenarios.includes(`in-turn recall, ${size(large!)}`)) {
    const restart = (env: Record<string, string>, warmList?: { listed: number }) =>
      restartedSessionCall(sidecarEnv(env), params.tenant, large!, size(large!), options.seed, checks, warmList);
    cold.push(...(await restart({ RECALL_DATABASE_URL: options.databaseUrl })).calls);
    const warmed = await restart(mainEnv, { listed: held });
    cold.push(...warmed.calls);
    loads.push(`  after a restart, the warm list: ${warmed.loaded}`);
  }
  await rm(warmDir, { recursive: true, force: true });

  // 2. Memory: one index of each size in this process; idle sidecars on each store; a fresh sidecar with ten 10k principals loaded.
  let indexBytes: IndexBytes[] = [];
  let idle: IdleRss[] = [];
  const rssLines: string[] = [];
  if (options.memory) {
    log("measuring retained index bytes in process");
    const db = createPostgresClient(options.databaseUrl, 1);
    try {
      indexBytes = await retainedIndexBytes(
        db,
        [small!, main10k, large!].map((p) => ({ label: `${size(p)} principal`, principal: { tenantId: params.tenant, principalId: p.principal } })),
      );
    } finally {
      await db.close();
    }
    log("measuring idle sidecars");
    idle = await idleRss(options.databaseUrl, sidecarEnv({}));
    log("measuring a sidecar with ten 10k principals");
    const loaded = await loadedRss(sidecarEnv({ RECALL_DATABASE_URL: options.databaseUrl }), params.tenant, [main10k, ...others10k], options.seed, checks);
    rssLines.push(formatLoadedRss(loaded, size(main10k)));
  }
  rssLines.push(`  the main run's sidecar (every scenario above, 1k to 100k principals): ${peakRss.toFixed(0)} MiB peak`);

  // 3. The embedded store: a 10k principal (compared with the PostgreSQL store's) and a 50k one.
  let eCold: FirstCall[] = [];
  const embeddedLines: string[] = [];
  if (options.embedded) {
    const eParams = embeddedGenerationParams({ seed: options.seed });
    const eStore = await prepareEmbeddedStore(options.embeddedDir, eParams, { force: options.regenerate, log });
    const [e10k, e50k] = eParams.measured.map((m) => ({ principal: m.principal, head: eStore.heads.get(m.principal) ?? 0 })) as [MeasuredPrincipal, MeasuredPrincipal];
    log("starting the sidecar on the embedded store");
    const embedded = await startSidecar(sidecarEnv({ RECALL_DATA_DIR: options.embeddedDir }));
    const eClient = connectBench(embedded.address, { tenant: eParams.tenant, principal: e10k.principal }, 2_000);
    try {
      eCold = await firstCalls([
        { label: "embedded: first in-turn recall after start-up, 10k principal", op: () => inTurnOp(eClient, e10k, options.seed, checks)(0) },
        { label: "embedded: its second call", op: () => inTurnOp(eClient, e10k, options.seed, checks)(1) },
        { label: "embedded: first in-turn recall of the 50k principal", op: () => inTurnOp(eClient, e50k, options.seed, checks)(0) },
      ]);
      embeddedLines.push(`  embedded background index loads: ${await indexesLoaded(embedded.address, 2, 180_000)}`);
      results.push(
        ...(await measure(
          EMBEDDED,
          [
            healthScenario(FLOOR_SCENARIO, eClient),
            { name: "in-turn recall", note: "10k principal", op: inTurnOp(eClient, e10k, options.seed, checks), setup: openInTurnSessions(eClient, e10k, options.seed) },
            {
              name: "in-turn recall, 50k",
              concurrencies: [base],
              op: inTurnOp(eClient, e50k, options.seed, checks),
              setup: openInTurnSessions(eClient, e50k, options.seed),
            },
            { name: "search, 50k", concurrencies: [base], op: searchOp(eClient, e50k, options.seed, checks) },
          ],
          options,
          log,
          state,
        )),
      );
      rssLines.push(`  embedded sidecar (10k and 50k principals loaded) peak RSS (VmHWM): ${(await rssMiB(embedded.child.pid!)).toFixed(0)} MiB`);
    } finally {
      eClient.close();
      await embedded.stop();
    }
  }

  const find = (group: string, name: string, c = base) => results.find((r) => r.group === group && r.scenario === name && r.concurrency === c)?.summary;
  const targets = judgeTargets({
    inTurn: find(PG, "in-turn recall"),
    search: find(PG, "search"),
    cachedSnapshot: find(PG, "snapshot open, cached"),
    coldSnapshot: find(PG, "snapshot open, cold"),
    floor: find(PG, FLOOR_SCENARIO),
    embeddedInTurn: find(EMBEDDED, "in-turn recall, 50k"),
  });
  const high = Math.max(...options.concurrency);
  const scaling = [PG, EMBEDDED].flatMap((group) =>
    throughputScaling(results, group, base, high).map((s) => `  ${group}, ${s.scenario}: ${s.ratio.toFixed(2)}x`),
  );
  const rawP50 = find(PG, "raw lexical SQL")?.p50 ?? NaN;
  const perBelief = (label: string) => indexBytes.find((r) => r.label === label)?.perBelief ?? NaN;
  const idleOf = (kind: string) => idle.find((r) => r.kind === kind)?.nowMiB ?? NaN;
  const costTargets = judgeCostTargets({
    indexBytesPerBelief10k: perBelief(`${size(main10k)} principal`),
    indexBytesPerBelief100k: perBelief(`${size(large!)} principal`),
    idlePostgresMiB: idleOf(STORE_KINDS.postgres),
    idleEphemeralMiB: idleOf(STORE_KINDS.ephemeral),
    idleDataDirMiB: idleOf(STORE_KINDS.dataDir),
    pgInTurn10k: find(PG, "in-turn recall"),
    embeddedInTurn10k: find(EMBEDDED, "in-turn recall"),
    embeddedScaling: throughputScaling(results, EMBEDDED, base, Math.max(...options.concurrency)).find((x) => x.scenario === "in-turn recall")?.ratio ?? NaN,
    firstCall100kMs: cold.find((c) => c.label === `first in-turn recall of the ${size(large!)} principal`)?.ms ?? NaN,
    pgInTurn100k: find(PG, `in-turn recall, ${size(large!)}`),
    floor: find(PG, FLOOR_SCENARIO),
    cachedSnapshot: find(PG, "snapshot open, cached"),
  });

  const out = [
    "",
    `recall latency benchmark: ${params.beliefs.toLocaleString("en-US")} beliefs, ${params.principals} other principals, ` +
      `measured principals of ${params.measured.map((m) => m.beliefs.toLocaleString("en-US")).join(", ")} (rows scattered), seed ${params.seed}`,
    `  ${options.rounds} round(s) × ${options.iterations} calls per scenario and concurrency (after ${options.warmup} warm-up); ` +
      "each figure is the median over rounds; gRPC over loopback with @grpc/grpc-js, one channel, deadline 2 s",
    `  machine: ${machine.cpu}, ${machine.ram} RAM, ${machine.os}; Node ${machine.node}; ${machine.postgresql}; load average at start ${machine.load}`,
    `  the 1k and 100k principals are measured at concurrency ${base} only; "× floor" is p50 over the ${FLOOR_SCENARIO} p50 of the same sidecar and concurrency`,
    "",
    ...[PG, EMBEDDED].flatMap((group) => {
      const rows = results.filter((r) => r.group === group);
      return rows.length === 0 ? [] : [`${group}:`, formatTable(rows), ""];
    }),
    "",
    "cold start (each call timed alone, right after the sidecar started):",
    ...formatFirstCalls([...cold, ...eCold]),
    ...loads,
    ...embeddedLines,
    "",
    `throughput at concurrency ${high} over concurrency ${base} (ops/s):`,
    ...scaling,
    "",
    `in-turn recall p50 / raw lexical SQL p50 at concurrency ${base}: ${((find(PG, "in-turn recall")?.p50 ?? NaN) / rawP50).toFixed(2)}x`,
    "where the time goes: arm latencies the sidecar recorded in this run's traces (1M store, all concurrencies and principals;",
    "cache hits run no arm; the structured arm is skipped, 0 ms, for queries without subjects or type anchors)",
    ...arms,
    "",
    `garbage collection in the main sidecar, concurrency ${base}, ${size(main10k)} principal (pauses the sidecar recorded itself; each call matched with those it was in flight for):`,
    ...gcLines,
    "",
    `in-turn recall by principal size (${PG}, concurrency ${base}):`,
    ...formatGrowth([small!, main10k, large!].map((p) => ({ size: size(p), summary: find(PG, p === main10k ? "in-turn recall" : `in-turn recall, ${size(p)}`) }))),
    "",
    `what a user would pick instead, over the ${size(main10k)} principal's statements (concurrency 1, the in-turn scenario's query texts):`,
    ...formatAlternatives(alternatives.results, find(PG, "in-turn recall")),
    ...alternatives.lines,
    "",
    "memory:",
    ...formatIndexBytes(indexBytes),
    ...formatIdleRss(idle),
    ...rssLines,
    `recalls with a degraded arm: ${checks.degraded}; cached snapshot calls not served from cache (warm-up included): ${checks.notFromCache}; ` +
      `cold snapshot calls served from cache: ${checks.coldFromCache}`,
    ...[...state.firstErrors].map(([name, message]) => `first error in ${name}: ${message}`),
    "",
    `targets (concurrency ${base}):`,
    formatTargets(targets),
    "",
    `cost targets (issue 37; a timing whose run-to-run spread exceeds its margin is met or missed by chance):`,
    formatTargets(costTargets),
    "",
  ].join("\n");
  process.stdout.write(out);
  if (options.json) {
    await writeFile(
      options.json,
      `${JSON.stringify(
        {
          params,
          options,
          machine,
          results,
          cold: [...cold, ...eCold],
          indexBytes,
          idle,
          alternatives: alternatives.results,
          rss: rssLines,
          embedded: embeddedLines,
          peakRssMiB: peakRss,
          checks,
          targets: [...targets, ...costTargets].map((t) => ({ ...t, met: met(t) })),
        },
        null,
        2,
      )}\n`,
    );
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);

#!/usr/bin/env node
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { lexicalTerms } from "../recall/query-former.js";
import { openingGoals, PROJECTS, queryTexts } from "./corpus.js";
import { generationParams, prepareStore } from "./generate.js";
import { connectBench, type BenchClient, type Json } from "./grpc-client.js";
import { runLoad } from "./load.js";
import { RAW_LEXICAL_SQL, rawLexicalParams } from "./raw-sql.js";
import { formatTable, formatTargets, judgeTargets, met, type ScenarioResult } from "./report.js";
import { medianOfRounds, type LatencySummary } from "./stats.js";

/**
 * `npm run bench`: the latency benchmark of issue 7. Not a test: it prints
 * figures. Generates (or reuses) a 1M-belief PostgreSQL store, starts the real
 * sidecar process, and measures it over gRPC beside the raw SQL it wraps.
 */

const USAGE = `usage: npm run bench -- [options]

  --database-url URL   bench database (default $RECALL_BENCH_DATABASE_URL or
                       postgres://postgres@127.0.0.1:5432/recall_bench); created, and dropped on --regenerate
  --regenerate         drop and generate the data again even if the recorded parameters match
  --beliefs N          total beliefs (default 1000000)
  --heavy N            beliefs of the measured principal (default 10000)
  --principals N       principals sharing the other beliefs (default 2000)
  --seed N             data and query seed (default 7)
  --iterations N       measured calls per scenario, concurrency and round (default 300)
  --warmup N           unmeasured calls before each of those (default 30)
  --rounds N           rounds; each figure is the median over rounds (default 3)
  --concurrency LIST   comma-separated (default 1,8)
  --quick              --iterations 60 --warmup 10 --rounds 1
  --pool-max N         the sidecar's RECALL_DB_POOL_MAX (default: the sidecar's own default)
  --log-level LEVEL    the sidecar's RECALL_LOG_LEVEL: info (default, as deployed: one line per call), debug or trace
  --json FILE          also write every figure as JSON`;

const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

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
  const concurrency = (values.concurrency ?? "1,8").split(",").map((c) => int("concurrency", c, 1));
  return {
    databaseUrl:
      values["database-url"] ?? process.env.RECALL_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/recall_bench",
    regenerate: values.regenerate,
    beliefs: int("beliefs", values.beliefs, 1_000_000),
    heavy: int("heavy", values.heavy, 10_000),
    principals: int("principals", values.principals, 2_000),
    seed: int("seed", values.seed, 7, 0),
    iterations: int("iterations", values.iterations, quick ? 60 : 300),
    warmup: int("warmup", values.warmup, quick ? 10 : 30, 0),
    rounds: int("rounds", values.rounds, quick ? 1 : 3),
    concurrency,
    poolMax: values["pool-max"],
    // The bench waits for the sidecar's "listening" line, which is logged at info.
    logLevel: oneOf("log-level", values["log-level"] ?? "info", ["info", "debug", "trace"]),
    json: values.json,
  };
}

interface Sidecar {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** The last lines it logged, for an error message. */
  tail(): string;
}

async function startSidecar(databaseUrl: string, options: Options): Promise<Sidecar> {
  const child = spawn(process.execPath, [CLI, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      RECALL_DATABASE_URL: databaseUrl,
      RECALL_HOST: "127.0.0.1",
      RECALL_PORT: "0",
      RECALL_LOG_LEVEL: options.logLevel,
      ...(options.poolMax ? { RECALL_DB_POOL_MAX: options.poolMax } : {}),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  // Its log is read continuously (a full pipe would stall the sidecar); only the tail is kept.
  let tail = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (tail = (tail + chunk).slice(-8000)));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar did not start in 60 s:\n${tail}`)), 60_000);
    let seen = "";
    const onData = (chunk: string) => {
      seen += chunk;
      const line = seen.split("\n").find((l) => l.includes('"recall sidecar listening"'));
      if (!line) return;
      clearTimeout(timer);
      child.stderr!.off("data", onData);
      resolve((JSON.parse(line) as { port: number }).port);
    };
    child.stderr!.on("data", onData);
    void exited.then(() => reject(new Error(`sidecar exited before listening:\n${tail}`)));
  });
  return {
    address: `127.0.0.1:${port}`,
    child,
    tail: () => tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? NaN);
  return kb / 1024;
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
    heavyBeliefs: options.heavy,
    principals: options.principals,
    seed: options.seed,
  });
  const store = await prepareStore(options.databaseUrl, params, { force: options.regenerate, log });
  if (!store.reused) log(`generated in ${store.generationSeconds.toFixed(0)} s`);

  const sql = postgres(options.databaseUrl, { max: Math.max(...options.concurrency), prepare: true, onnotice: () => {} });
  const machine = await machineInfo(sql);
  log("starting the sidecar");
  const sidecar = await startSidecar(options.databaseUrl, options);
  const identity = { tenant: params.tenant, principal: params.heavyPrincipal };
  const client: BenchClient = connectBench(sidecar.address, identity, 2_000);

  const queries = queryTexts(options.seed, 997);
  const goals = openingGoals(options.seed, 101);
  const scopeOf = (seq: number) => PROJECTS[seq % PROJECTS.length]!;
  let degraded = 0;
  let notFromCache = 0;
  let coldFromCache = 0;
  const countDegraded = (result: Json) => {
    if ((result.arms_degraded as string[]).length > 0) degraded += 1;
  };

  // One operation per scenario; `seq` varies the request.
  const scenarios: { name: string; note?: string; op: (seq: number) => Promise<void> }[] = [
    { name: "SELECT 1 (floor)", op: async () => void (await sql.unsafe("SELECT 1", [], { prepare: true })) },
    {
      name: "raw lexical SQL",
      note: "postgres.js, no sidecar",
      op: async (seq) => {
        const q = queries[seq % queries.length]!;
        const terms = lexicalTerms(q.text);
        const p = rawLexicalParams({ ...identity, terms, subjects: q.subjects, currentScope: scopeOf(seq), now: new Date() });
        await sql.unsafe(RAW_LEXICAL_SQL, p as postgres.ParameterOrJSON<never>[], { prepare: true });
      },
    },
    {
      name: "in-turn recall",
      op: async (seq) => {
        const q = queries[seq % queries.length]!;
        const result = await client.recall({
          moment: "MOMENT_IN_TURN",
          session_id: `bench-s${seq % 50}`,
          turn_id: `t${seq}`,
          snapshot_watermark: String(store.heavyHead),
          query: { current_scope: scopeOf(seq), text: q.text, subjects: q.subjects },
        });
        countDegraded(result);
      },
    },
    {
      // A cache miss every time: the window size is part of the cache key, and 2% of it stays above the caps.
      name: "snapshot open, cold",
      note: "a cache miss each call",
      op: async (seq) => {
        const result = await client.recall({
          moment: "MOMENT_SNAPSHOT",
          session_id: `bench-open-${seq}`,
          session_type: "SESSION_TYPE_INTERACTIVE",
          context_window_tokens: 200_000 + seq,
          query: { current_scope: scopeOf(seq), text: goals[seq % goals.length]! },
        });
        countDegraded(result);
        if (result.from_cache) coldFromCache += 1;
      },
    },
    {
      name: "snapshot open, cached",
      note: "from_cache checked",
      op: async (seq) => {
        const result = await client.recall({
          moment: "MOMENT_SNAPSHOT",
          session_id: `bench-cached-${seq}`,
          session_type: "SESSION_TYPE_INTERACTIVE",
          context_window_tokens: 200_000,
          query: { current_scope: "veetbot", text: goals[0]! },
        });
        if (!result.from_cache) notFromCache += 1;
      },
    },
    {
      name: "search",
      op: async (seq) => {
        const q = queries[(seq * 7) % queries.length]!;
        const result = await client.search({ text: q.text, subjects: q.subjects, scope: scopeOf(seq), session_id: `bench-s${seq % 50}` });
        countDegraded(result);
      },
    },
  ];

  const perRound = new Map<string, LatencySummary[]>();
  const firstErrors = new Map<string, string>();
  let seq = 1;
  let peakRss = NaN;
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      for (const concurrency of options.concurrency) {
        for (const s of scenarios) {
          log(`round ${round}/${options.rounds}, concurrency ${concurrency}: ${s.name}`);
          const run = await runLoad(s.op, { iterations: options.iterations, concurrency, warmup: options.warmup, firstSeq: seq });
          seq = run.nextSeq;
          const key = `${s.name}\u0000${concurrency}`;
          perRound.set(key, [...(perRound.get(key) ?? []), run.summary]);
          if (run.firstError && !firstErrors.has(s.name)) firstErrors.set(s.name, run.firstError);
        }
      }
    }
  } finally {
    peakRss = await peakRssMiB(sidecar.child.pid!).catch(() => NaN);
    client.close();
    await sidecar.stop();
  }
  // After the stop: the sidecar flushes its queued traces on the way out.
  const arms = await armLatencies(sql).finally(() => sql.end({ timeout: 5 }));

  const results: ScenarioResult[] = [];
  for (const concurrency of options.concurrency) {
    for (const s of scenarios) {
      const summary = medianOfRounds(perRound.get(`${s.name}\u0000${concurrency}`) ?? []);
      results.push({ scenario: s.name, concurrency, summary, note: s.note ?? "" });
    }
  }
  const find = (name: string, c: number) => results.find((r) => r.scenario === name && r.concurrency === c)!.summary;
  const base = options.concurrency[0]!;
  const ratios = options.concurrency.map((c) => {
    const raw = find("raw lexical SQL", c).p50;
    return `  concurrency ${c}: in-turn recall p50 / raw lexical SQL p50 = ${(find("in-turn recall", c).p50 / raw).toFixed(2)}x` +
      `, search p50 / raw = ${(find("search", c).p50 / raw).toFixed(2)}x, raw SQL p50 / SELECT 1 p50 = ${(raw / find("SELECT 1 (floor)", c).p50).toFixed(1)}x`;
  });
  const targets = judgeTargets(find("in-turn recall", base), find("snapshot open, cached", base), find("raw lexical SQL", base));

  const out = [
    "",
    `recall latency benchmark: ${params.beliefs.toLocaleString("en-US")} beliefs, ${params.principals} other principals, ` +
      `measured principal with ${params.heavyBeliefs.toLocaleString("en-US")} (rows scattered), seed ${params.seed}`,
    `  ${options.rounds} round(s) × ${options.iterations} calls per scenario and concurrency (after ${options.warmup} warm-up); ` +
      "each figure is the median over rounds; gRPC over loopback with @grpc/grpc-js, deadline 2 s",
    `  machine: ${machine.cpu}, ${machine.ram} RAM, ${machine.os}; Node ${machine.node}; ${machine.postgresql}; load average at start ${machine.load}`,
    "",
    formatTable(results),
    "",
    "ratios (p50):",
    ...ratios,
    "",
    "where the time goes: arm latencies the sidecar recorded in this run's traces (all concurrencies; cache hits run no arm;",
    "the structured arm is skipped, 0 ms, for queries without subjects or type anchors)",
    ...arms,
    "",
    `sidecar peak RSS (VmHWM): ${peakRss.toFixed(0)} MiB`,
    `recalls with a degraded arm: ${degraded}; cached snapshot calls not served from cache (warm-up included): ${notFromCache}; ` +
      `cold snapshot calls served from cache: ${coldFromCache}`,
    ...[...firstErrors].map(([name, message]) => `first error in ${name}: ${message}`),
    "",
    `targets (concurrency ${base}):`,
    formatTargets(targets),
    "",
  ].join("\n");
  process.stdout.write(out);
  if (options.json) {
    await writeFile(
      options.json,
      `${JSON.stringify({ params, options, machine, results, peakRssMiB: peakRss, degraded, notFromCache, coldFromCache, targets: targets.map((t) => ({ ...t, met: met(t) })) }, null, 2)}\n`,
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

#!/usr/bin/env node
import { existsSync, statSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { benchDatabaseUrl, embeddedGenerationParams, generationParams, prepareEmbeddedStore, prepareStore } from "./generate.js";
import { connectBench, type BenchClient } from "./grpc-client.js";
import { cachedSnapshotOp, healthScenario, inTurnOp, openInTurnSessions, searchOp, type Checks, type MeasuredPrincipal } from "./scenarios.js";
import { formatGcOverlap, gcOverlap, type TimedCall } from "./gc-overlap.js";
import { formatSideBySide, pairOrder, sideResult } from "./side-by-side.js";
import { CLI, cpuTimeMs, gcRecording, indexesLoaded, startSidecar, type SidecarProcess } from "./sidecar-process.js";

/**
 * `npm run bench:ab`: two sidecars on the bench's 1M store at once, called
 * alternately (side-by-side.ts), to compare two builds or two settings of
 * one. Not a test: it prints both sides' figures and B − A. Run it A/A first
 * (the same build on both sides) to see how far apart two identical sides
 * land on the machine at hand. Each sidecar also records its garbage-collection
 * pauses (gc-recorder.ts), and the report says which calls met one.
 */

const USAGE = `usage: npm run bench:ab -- [options]

  --a PATH             side A's build: a checkout (with dist/cli/main.js) or the CLI file (default: this build)
  --b PATH             side B's build (default: this build)
  --a-node-flags=…     node flags for side A's sidecar, e.g. --a-node-flags="--max-semi-space-size=64"
                       (likewise --b-node-flags; the = is needed, the value starts with a dash)
  --a-env K=V,K=V      environment for side A's sidecar, e.g. RECALL_LOG_LEVEL=warn (likewise --b-env)
  --scenario NAME      in-turn (default), search, cached (a snapshot served from the cache) or health
  --calls N            measured calls per side (default 3000)
  --warmup N           unmeasured calls per side first (default 1500)
  --principal NAME     the measured principal (default heavy, 10k beliefs)
  --also-load LIST     other principals, separated by commas, whose indexes each side loads before
                       anything is timed, e.g. heavy-1k,heavy-100k as npm run bench's main sidecar holds
  --database-url URL   bench database (default $RECALL_BENCH_DATABASE_URL or
                       postgres://postgres@127.0.0.1:5432/recall_bench); generated like npm run bench's when missing
  --embedded-dir DIR   the embedded (PGlite) store instead, npm run bench's (its principals heavy and heavy-50k;
                       generated when missing): each side runs on a copy of its own
  --seed N             data and query seed (default 7)`;

interface Side {
  label: string;
  cli: string;
  nodeFlags: string[];
  env: Record<string, string>;
}

interface Options {
  a: Side;
  b: Side;
  scenario: "in-turn" | "search" | "cached" | "health";
  calls: number;
  warmup: number;
  principal: string;
  alsoLoad: string[];
  databaseUrl: string;
  embeddedDir: string | null;
  seed: number;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      a: { type: "string" },
      b: { type: "string" },
      "a-node-flags": { type: "string" },
      "b-node-flags": { type: "string" },
      "a-env": { type: "string" },
      "b-env": { type: "string" },
      scenario: { type: "string", default: "in-turn" },
      calls: { type: "string" },
      warmup: { type: "string" },
      principal: { type: "string", default: "heavy" },
      "also-load": { type: "string", default: "" },
      "database-url": { type: "string" },
      "embedded-dir": { type: "string" },
      seed: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return null;
  const int = (name: string, raw: string | undefined, fallback: number, min: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: must be an integer ≥ ${min}`);
    return n;
  };
  const scenario = values.scenario!;
  if (scenario !== "in-turn" && scenario !== "search" && scenario !== "cached" && scenario !== "health") {
    throw new Error("--scenario: must be in-turn, search, cached or health");
  }
  const side = (name: "a" | "b"): Side => {
    const cli = cliOf(values[name], `--${name}`);
    const nodeFlags = (values[`${name}-node-flags`] ?? "").split(" ").filter((f) => f !== "");
    const env = envOf(values[`${name}-env`], `--${name}-env`);
    const settings = [...nodeFlags, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(" ");
    return { label: `${cli}${settings ? ` (${settings})` : ""}`, cli, nodeFlags, env };
  };
  return {
    a: side("a"),
    b: side("b"),
    scenario,
    calls: int("calls", values.calls, 3_000, 1),
    warmup: int("warmup", values.warmup, 1_500, 0),
    principal: values.principal!,
    alsoLoad: values["also-load"]!.split(",").map((n) => n.trim()).filter((n) => n !== ""),
    databaseUrl: benchDatabaseUrl(values["database-url"]),
    embeddedDir: values["embedded-dir"] ?? null,
    seed: int("seed", values.seed, 7, 0),
  };
}

/** A build's CLI: the file itself, or dist/cli/main.js under a checkout. */
function cliOf(path: string | undefined, flag: string): string {
  if (path === undefined) return CLI;
  const full = resolve(path);
  const cli = existsSync(full) && statSync(full).isDirectory() ? join(full, "dist", "cli", "main.js") : full;
  if (!existsSync(cli)) throw new Error(`${flag}: ${cli} is missing (build that checkout first: npm run build)`);
  return cli;
}

function envOf(raw: string | undefined, flag: string): Record<string, string> {
  if (raw === undefined || raw === "") return {};
  return Object.fromEntries(
    raw.split(",").map((pair) => {
      const at = pair.indexOf("=");
      if (at <= 0) throw new Error(`${flag}: expected K=V pairs separated by commas, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const log = (line: string) => process.stderr.write(`bench:ab: ${line}\n`);
  // npm run bench's store with its default sizes: reused when its parameters match (a store generated
  // with other sizes is generated again).
  const params = options.embeddedDir ? embeddedGenerationParams({ seed: options.seed }) : generationParams({ seed: options.seed });
  for (const [flag, name] of [["--principal", options.principal], ...options.alsoLoad.map((n) => ["--also-load", n])]) {
    if (!params.measured.some((m) => m.principal === name)) throw new Error(`${flag}: one of ${params.measured.map((m) => m.principal).join(", ")}`);
  }
  const store = options.embeddedDir
    ? await prepareEmbeddedStore(options.embeddedDir, params, { force: false, log })
    : await prepareStore(options.databaseUrl, params, { force: false, log });
  // A PGlite directory takes one process: each side gets a copy (removed at the end).
  const copies = options.embeddedDir ? await mkdtemp(join(tmpdir(), "recall-bench-ab-")) : null;
  const who: MeasuredPrincipal = { principal: options.principal, head: store.heads.get(options.principal) ?? 0 };

  const started: SidecarProcess[] = [];
  const recordings: ReturnType<typeof gcRecording>[] = [];
  try {
    const sides = [];
    for (const [name, side] of [["a", options.a], ["b", options.b]] as const) {
      log(`starting ${side.label}`);
      const gc = gcRecording(`ab-${name}`);
      recordings.push(gc);
      let storeEnv: Record<string, string> = { RECALL_DATABASE_URL: options.databaseUrl };
      if (copies) {
        storeEnv = { RECALL_DATA_DIR: join(copies, name) };
        await cp(options.embeddedDir!, storeEnv.RECALL_DATA_DIR!, { recursive: true });
      }
      const sidecar = await startSidecar(
        { ...storeEnv, RECALL_LOG_LEVEL: "info", ...gc.env, ...side.env },
        undefined,
        { cli: side.cli, nodeFlags: [...side.nodeFlags, ...gc.nodeFlags] },
      );
      started.push(sidecar);
      const client = connectBench(sidecar.address, { tenant: params.tenant, principal: who.principal }, 5_000);
      sides.push({ side, sidecar, gc, client, op: operation(options.scenario, client, who, options.seed), timed: [] as TimedCall[], errors: 0, firstError: "" });
    }
    // Each side opens its sessions and loads the principals' indexes before anything is timed.
    for (const s of sides) {
      if (options.scenario === "in-turn") await openInTurnSessions(s.client, who, options.seed)();
      await s.op(0);
      for (const other of options.alsoLoad) await operation("in-turn", s.client, { principal: other, head: store.heads.get(other) ?? 0 }, options.seed)(0);
    }
    // A health check names no principal, so only the --also-load ones have an index to wait for.
    const indexes = (options.scenario === "health" ? 0 : 1) + options.alsoLoad.length;
    for (const s of sides) log(`${s.side.label}: ${await indexesLoaded(s.sidecar.address, indexes, 180_000)}`);
    await delay(3_000);
    log(`${options.warmup} warm-up and ${options.calls} measured ${options.scenario} calls a side, alternating`);
    const [a, b] = sides as [(typeof sides)[0], (typeof sides)[0]];
    const bySide = { a, b };
    const call = async (s: typeof a, seq: number, record: boolean) => {
      const t0 = performance.now();
      try {
        await s.op(seq);
        if (record) s.timed.push({ startMs: performance.timeOrigin + t0, ms: performance.now() - t0 });
      } catch (error) {
        if (!record) return;
        s.errors += 1;
        s.firstError ||= error instanceof Error ? error.message : String(error);
      }
    };
    for (let i = 0; i < options.warmup; i++) for (const name of pairOrder(i)) await call(bySide[name], i + 1, false);
    const cpuBefore = await Promise.all(sides.map((s) => cpuTimeMs(s.sidecar.child.pid)));
    const wallStart = performance.now();
    for (let i = 0; i < options.calls; i++) for (const name of pairOrder(i)) await call(bySide[name], options.warmup + i + 1, true);
    const wallMs = performance.now() - wallStart;
    const cpuAfter = await Promise.all(sides.map((s) => cpuTimeMs(s.sidecar.child.pid)));
    const results = sides.map((s, k) => sideResult(s.side.label, s.timed.map((t) => t.ms), wallMs, cpuAfter[k]! - cpuBefore[k]!, s.errors));
    process.stdout.write(
      `${options.scenario} calls of principal ${who.principal}, alternating A and B (first side swapped every 100 pairs); ms\n` +
        `${formatSideBySide(results[0]!, results[1]!)}\n`,
    );
    for (const [name, s] of [["A", a], ["B", b]] as const) if (s.firstError) process.stdout.write(`${name}'s first error: ${s.firstError}\n`);
    for (const s of sides) s.client.close();
    // The recorder writes its file when the sidecar exits.
    await Promise.all(sides.map((s) => s.sidecar.stop()));
    for (const [name, s] of [["A", a], ["B", b]] as const) {
      const pauses = await s.gc.read();
      process.stdout.write(pauses ? `${formatGcOverlap(name, gcOverlap(s.timed, pauses))}\n` : `${name}: no garbage-collection record\n`);
    }
    return 0;
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await Promise.all(recordings.map((gc) => gc.remove()));
    if (copies) await rm(copies, { recursive: true, force: true });
  }
}

function operation(scenario: Options["scenario"], client: BenchClient, who: MeasuredPrincipal, seed: number): (seq: number) => Promise<void> {
  const checks: Checks = { degraded: 0, notFromCache: 0, coldFromCache: 0 };
  if (scenario === "search") return searchOp(client, who, seed, checks);
  if (scenario === "health") return healthScenario("health", client).op;
  if (scenario === "cached") return cachedSnapshotOp(client, who, seed, checks);
  return inTurnOp(client, who, seed, checks);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench:ab: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

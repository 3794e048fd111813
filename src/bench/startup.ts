#!/usr/bin/env node
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { cpuTimeMs } from "./sidecar-process.js";
import { median } from "./stats.js";

/**
 * `npm run bench:startup`: cold start of `recall serve`, from process spawn to
 * the "listening" log line (written once the health status is SERVING), for
 * each kind of store. Not a test: it prints figures (the median of N starts,
 * and where the time went: until "store ready", and the rest). It also reads
 * the process's CPU time at SERVING from /proc (Linux), which a machine shared
 * with other work inflates far less than the wall time.
 */

const USAGE = `usage: npm run bench:startup -- [--starts N] [--database-url URL] [--only ephemeral,existing,fresh,postgres]

  --starts N          starts per store kind (default 10)
  --database-url URL  PostgreSQL server whose admin database is used to create (and drop) a scratch
                      database (default $RECALL_BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)`;

const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

type Kind = "ephemeral" | "existing" | "fresh" | "postgres";
const KINDS: readonly Kind[] = ["ephemeral", "existing", "fresh", "postgres"];

interface Start {
  /** Spawn to the "store ready" log line. */
  storeReadyMs: number;
  /** Spawn to "recall sidecar listening" (SERVING). */
  servingMs: number;
  /** User + system CPU time of the sidecar process until SERVING, all threads; NaN where /proc is missing. */
  cpuMs: number;
}

async function startOnce(env: Record<string, string>): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, "serve"], {
    env: { PATH: process.env.PATH ?? "", RECALL_PORT: "0", RECALL_LOG_LEVEL: "info", RECALL_TRACE_SWEEP_INTERVAL_MS: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  let log = "";
  // Both times are taken when the line reaches us, on one clock: the log's own "time" is ISO 8601
  // wall-clock text, a clock the spawn time would have to be read from too.
  let storeReadyMs = Number.NaN;
  const result = await new Promise<Omit<Start, "cpuMs">>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no SERVING within 60 s:\n${log}`)), 60_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      log += chunk;
      if (Number.isNaN(storeReadyMs) && log.includes('"store ready"')) storeReadyMs = performance.now() - t0;
      if (!log.includes('"recall sidecar listening"')) return;
      clearTimeout(timer);
      resolve({ storeReadyMs, servingMs: performance.now() - t0 });
    });
    void exited.then((code) => reject(new Error(`sidecar exited with ${code}:\n${log}`)));
  });
  const cpuMs = await cpuTimeMs(child.pid);
  child.kill("SIGTERM");
  await exited;
  return { ...result, cpuMs };
}

async function measure(kind: Kind, starts: number, adminUrl: string): Promise<Start[]> {
  const results: Start[] = [];
  if (kind === "ephemeral") {
    for (let i = 0; i < starts; i += 1) results.push(await startOnce({ RECALL_DATA_DIR: "memory://" }));
  } else if (kind === "fresh") {
    for (let i = 0; i < starts; i += 1) {
      const dir = await mkdtemp(join(os.tmpdir(), "recall-startup-"));
      results.push(await startOnce({ RECALL_DATA_DIR: dir }));
      await rm(dir, { recursive: true, force: true });
    }
  } else if (kind === "existing") {
    const dir = await mkdtemp(join(os.tmpdir(), "recall-startup-"));
    await startOnce({ RECALL_DATA_DIR: dir }); // creates and migrates it; not counted
    for (let i = 0; i < starts; i += 1) results.push(await startOnce({ RECALL_DATA_DIR: dir }));
    await rm(dir, { recursive: true, force: true });
  } else {
    const name = `recall_startup_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    try {
      await startOnce({ RECALL_DATABASE_URL: url.toString() }); // migrates it; not counted
      for (let i = 0; i < starts; i += 1) results.push(await startOnce({ RECALL_DATABASE_URL: url.toString() }));
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
  return results;
}

const LABELS: Record<Kind, string> = {
  ephemeral: "ephemeral (memory://)",
  existing: "existing directory",
  fresh: "fresh directory",
  postgres: "PostgreSQL (migrated)",
};

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { starts: { type: "string" }, "database-url": { type: "string" }, only: { type: "string" }, help: { type: "boolean" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const starts = Number(values.starts ?? 10);
  const kinds = (values.only?.split(",") ?? KINDS) as Kind[];
  if (!Number.isInteger(starts) || starts < 1 || kinds.some((k) => !KINDS.includes(k))) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const adminUrl = values["database-url"] ?? process.env.RECALL_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  process.stdout.write(`cold start, spawn to SERVING, median of ${starts}; node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}\n`);
  process.stdout.write(`${"store".padEnd(24)} ${"serving ms".padStart(10)} ${"min".padStart(7)} ${"max".padStart(7)} ${"store ready ms".padStart(15)} ${"cpu ms".padStart(7)}\n`);
  for (const kind of kinds) {
    const runs = await measure(kind, starts, adminUrl);
    const serving = runs.map((r) => r.servingMs);
    const line = [
      LABELS[kind].padEnd(24),
      median(serving).toFixed(0).padStart(10),
      Math.min(...serving).toFixed(0).padStart(7),
      Math.max(...serving).toFixed(0).padStart(7),
      median(runs.map((r) => r.storeReadyMs)).toFixed(0).padStart(15),
      median(runs.map((r) => r.cpuMs)).toFixed(0).padStart(7),
    ];
    process.stdout.write(`${line.join(" ")}\n`);
  }
  process.stdout.write(`load average after: ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`bench:startup: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

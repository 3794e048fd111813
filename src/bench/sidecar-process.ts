import { spawn, type ChildProcess } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { GcPause } from "./gc-overlap.js";

/** The real sidecar as a child process, as the benchmark drives it: started, measured from outside, stopped. */

export const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** Loaded into a benchmarked sidecar with `--import` to record its collector pauses (gc-recorder.ts). */
const GC_RECORDER = fileURLToPath(new URL("./gc-recorder.js", import.meta.url));

/**
 * What a sidecar needs to record its garbage-collection pauses into a file of
 * its own (named by `label`), for startSidecar's env and node flags, and how
 * to read them once it has stopped (the file is written at exit, then removed).
 */
export function gcRecording(label: string): {
  env: Record<string, string>;
  nodeFlags: string[];
  read(): Promise<GcPause[] | null>;
  remove(): Promise<void>;
} {
  const file = join(tmpdir(), `recall-bench-${process.pid}-${label}-gc.json`);
  const remove = () => rm(file, { force: true });
  return {
    env: { RECALL_BENCH_GC_FILE: file },
    nodeFlags: ["--import", GC_RECORDER],
    read: () => readFile(file, "utf8").then((text) => JSON.parse(text) as GcPause[], () => null).finally(remove),
    remove,
  };
}

export interface SidecarProcess {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** The last lines it logged, for an error message. */
  tail(): string;
}

/**
 * Starts `recall serve` with `env` (a PostgreSQL URL or a PGlite data
 * directory) and waits for its "listening" line. With `cpuProfileDir`, node
 * writes a CPU profile of the sidecar there when it stops. `build` runs
 * another build's CLI, or node with flags of its own (bench:ab compares two).
 */
export async function startSidecar(
  env: Record<string, string>,
  cpuProfileDir?: string,
  build: { cli?: string; nodeFlags?: readonly string[] } = {},
): Promise<SidecarProcess> {
  const nodeArgs = [...(build.nodeFlags ?? []), ...(cpuProfileDir ? ["--cpu-prof", "--cpu-prof-dir", cpuProfileDir] : [])];
  const child = spawn(process.execPath, [...nodeArgs, build.cli ?? CLI, "serve"], {
    // No warm list unless asked for: the bench's cold figures are of a sidecar that starts with no index.
    env: { PATH: process.env.PATH ?? "", RECALL_HOST: "127.0.0.1", RECALL_PORT: "0", RECALL_INDEX_WARM: "off", ...env },
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

/** Resident set size of a process in MiB: `peak` is VmHWM (the high-water mark), otherwise VmRSS now. */
export async function rssMiB(pid: number, which: "peak" | "now" = "peak"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const field = which === "peak" ? "VmHWM" : "VmRSS";
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** utime + stime of a process from /proc/PID/stat, all its threads, in ms (clock ticks of 10 ms); NaN where /proc is missing. */
export async function cpuTimeMs(pid: number | undefined): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (stat === null) return Number.NaN;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Waits until the sidecar's /metrics shows `count` principal indexes loaded and warmed; says how long that took. */
export async function indexesLoaded(address: string, count: number, timeoutMs: number, after = "the first calls"): Promise<string> {
  const started = performance.now();
  let principals = 0;
  let failures = 0;
  while (performance.now() - started < timeoutMs) {
    const text = await fetch(`http://${address}/metrics`).then((r) => r.text(), () => "");
    principals = Number(/^recall_index_principals (\S+)$/m.exec(text)?.[1] ?? 0);
    failures = Number(/^recall_index_load_failures_total (\S+)$/m.exec(text)?.[1] ?? 0);
    const warming = Number(/^recall_index_warming (\S+)$/m.exec(text)?.[1] ?? 0);
    if (principals >= count && warming === 0) return `${principals} loaded ${((performance.now() - started) / 1000).toFixed(1)} s after ${after}`;
    await delay(200);
  }
  return `only ${principals} of ${count} loaded after ${timeoutMs / 1000} s (${failures} load failures): SQL answered meanwhile`;
}

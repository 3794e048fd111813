import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, startSidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase, POSTGRES_URL } from "../support/stores.js";

/** Runs `recall serve` until it exits by itself; a sidecar that kept running would time the test out. */
function serve(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "serve"], {
      env: { PATH: process.env.PATH ?? "", RECALL_LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

/** The lines that are not JSON log lines: what a person reads. */
function plainLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line !== "" && !line.startsWith("{"));
}

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** A start-up failure is one line naming the cause and the setting, a non-zero exit, and nothing left listening. */
describe("sidecar start-up failures", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-startup-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a Unix socket in a missing directory: one line naming RECALL_SOCKET_PATH, exit 1, the TCP port released", async () => {
    const port = 51520;
    const socket = join(dir, "missing", "recall.sock");
    const ran = await serve({ RECALL_PORT: String(port), RECALL_DATA_DIR: join(dir, "data-socket"), RECALL_SOCKET_PATH: socket });
    expect(ran.code).toBe(1);
    expect(plainLines(ran.stderr)).toEqual([
      `recall serve: cannot listen on unix socket ${socket}: the directory ${join(dir, "missing")} does not exist (RECALL_SOCKET_PATH=${socket})`,
    ]);
    expect(ran.stderr).not.toMatch(/^\s+at /m);
    // The TCP listener it had bound first is gone: the port can be bound again.
    const server = await listenOn(port);
    await new Promise((resolve) => server.close(resolve));
  });

  it("a port in use: one line naming RECALL_PORT, exit 1", async () => {
    const busy = await listenOn(0);
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const ran = await serve({ RECALL_PORT: String(port), RECALL_DATA_DIR: join(dir, "data-port") });
      expect(ran.code).toBe(1);
      expect(plainLines(ran.stderr)).toEqual([`recall serve: cannot listen on 127.0.0.1:${port}: the port is already in use (RECALL_PORT=${port})`]);
      expect(ran.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it("a PostgreSQL server that cannot be reached, or a database that does not exist: one line naming RECALL_DATABASE_URL without its password", async () => {
    const closed = await listenOn(0);
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await serve({ RECALL_PORT: "0", RECALL_DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/x` });
    expect(unreachable.code).toBe(1);
    expect(plainLines(unreachable.stderr)).toEqual([
      `recall serve: cannot open the PostgreSQL store at postgres://postgres@127.0.0.1:${port}/x: the server cannot be reached (ECONNREFUSED) (RECALL_DATABASE_URL)`,
    ]);
    expect(unreachable.stderr).not.toContain("s3cret");

    const url = new URL(POSTGRES_URL);
    url.pathname = "/issue13_ops_no_such_database";
    const missing = await serve({ RECALL_PORT: "0", RECALL_DATABASE_URL: url.toString() });
    expect(missing.code).toBe(1);
    expect(plainLines(missing.stderr)).toEqual([expect.stringMatching(/: the database does not exist \(RECALL_DATABASE_URL\)$/)]);
  });

  it("a data directory under a file: one line naming RECALL_DATA_DIR", async () => {
    await writeFile(join(dir, "a-file"), "");
    const dataDir = join(dir, "a-file", "data");
    const ran = await serve({ RECALL_PORT: "0", RECALL_DATA_DIR: dataDir });
    expect(ran.code).toBe(1);
    expect(plainLines(ran.stderr)).toEqual([
      `recall serve: cannot open the embedded store in ${dataDir}: a part of the path is a file, not a directory (RECALL_DATA_DIR=${dataDir})`,
    ]);
  });

  it("refuses a data directory open to other users: one line saying chmod 700", async () => {
    const dataDir = join(dir, "open-data");
    await mkdir(dataDir);
    await chmod(dataDir, 0o755);
    const ran = await serve({ RECALL_PORT: "0", RECALL_DATA_DIR: dataDir });
    expect(ran.code).toBe(1);
    expect(plainLines(ran.stderr)).toEqual([
      `recall serve: the data directory ${dataDir} (RECALL_DATA_DIR) is open to other users (mode 0755) and holds memory: run chmod 700 ${dataDir}`,
    ]);
    // Fixed as it says, it starts.
    await chmod(dataDir, 0o700);
    const sidecar = await startSidecarProcess("pglite", {}, { dataDir });
    expect(await sidecar.stop()).toBe(0);
  });

  it("refuses a trace spool folder open to other users on PostgreSQL", async () => {
    const spoolDir = join(dir, "open-spool");
    await mkdir(spoolDir);
    await chmod(spoolDir, 0o750);
    const db = await freshPostgresDatabase();
    try {
      const ran = await serve({ RECALL_PORT: "0", RECALL_DATABASE_URL: db.url, RECALL_DATA_DIR: join(dir, "pg-data"), RECALL_TRACE_SPOOL_DIR: spoolDir });
      expect(ran.code).toBe(1);
      expect(plainLines(ran.stderr)).toEqual([
        `recall serve: the trace spool folder ${spoolDir} (RECALL_TRACE_SPOOL_DIR) is open to other users (mode 0750) and holds memory: run chmod 700 ${spoolDir}`,
      ]);
    } finally {
      await db.drop();
    }
  });
});

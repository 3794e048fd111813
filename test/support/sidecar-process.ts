import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPgBouncer } from "./pgbouncer.js";
import { freshPostgresDatabase } from "./stores.js";

/**
 * Starts the built sidecar (`node dist/cli/main.js serve`) as a real process
 * on a free port, on a fresh PGlite directory or a fresh PostgreSQL database
 * (directly, or through a PgBouncer of its own in transaction mode), and
 * waits for its "listening" log line. `npm test` builds first.
 */

export type SidecarStoreKind = "pglite" | "postgres" | "pgbouncer";

export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface SidecarProcess {
  port: number;
  address: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr (its JSON log lines). */
  logs: () => string;
  /** The database URL when on PostgreSQL (direct, not through the pooler). */
  databaseUrl?: string;
  /** SIGTERM, wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** Storage the test owns: it is used as given and left in place on stop (for a CLI to read afterwards). */
export interface OwnedStorage {
  dataDir?: string;
  databaseUrl?: string;
}

export async function startSidecarProcess(
  kind: SidecarStoreKind,
  env: Record<string, string> = {},
  owned: OwnedStorage = {},
  serveArgs: readonly string[] = [],
): Promise<SidecarProcess> {
  const dataDir = owned.dataDir ?? (await mkdtemp(join(tmpdir(), "recall-it-")));
  const database =
    kind === "pglite" ? undefined : owned.databaseUrl ? { url: owned.databaseUrl, drop: async () => {} } : await freshPostgresDatabase();
  const pooler = kind === "pgbouncer" ? await startPgBouncer(database!.url) : undefined;
  const child = spawn(process.execPath, [CLI, "serve", ...serveArgs], {
    env: {
      PATH: process.env.PATH ?? "",
      RECALL_PORT: "0",
      RECALL_DATA_DIR: dataDir,
      RECALL_LOG_LEVEL: "info",
      RECALL_SHUTDOWN_GRACE_MS: "3000",
      ...(database ? { RECALL_DATABASE_URL: pooler?.url ?? database.url } : {}),
      ...(pooler ? { RECALL_DATABASE_POOLER: "transaction" } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout!.resume();

  // "close", not "exit": it comes after the process's stdio is drained, so no log line is missed.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar did not start in time:\n${stderr}`)), 45_000);
    const onData = () => {
      for (const line of stderr.split("\n")) {
        if (!line.includes('"recall sidecar listening"')) continue;
        clearTimeout(timer);
        child.stderr!.off("data", onData);
        resolve((JSON.parse(line) as { port: number }).port);
        return;
      }
    };
    child.stderr!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code} before listening:\n${stderr}`));
    });
  });
  const port = await listening.catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await pooler?.stop();
    throw error;
  });

  return {
    port,
    address: `127.0.0.1:${port}`,
    child,
    logs: () => stderr,
    databaseUrl: database?.url,
    async stop() {
      // One SIGTERM only: a second one means "stop now" to the sidecar.
      if (!child.killed && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      if (!owned.dataDir) await rm(dataDir, { recursive: true, force: true });
      await pooler?.stop();
      await database?.drop();
      return code;
    },
  };
}

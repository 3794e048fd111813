import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRecallClient, type RecallClient } from "../sdk/client.js";
import { EPHEMERAL_DATA_DIR } from "../store/ephemeral-start.js";
import type { Fixture } from "./fixtures.js";

/**
 * `@recall-memory/sidecar/testing`: a real recall sidecar for an agent runtime's integration
 * tests, started in a second or less on an in-memory store, seeded with
 * fixtures, reset between tests. It is a child process (not a server inside
 * the test's own process), so fake timers, module mocks and a crashing test
 * cannot reach it, and it is the same `startSidecar` that `recall serve` runs;
 * see docs/adr/0007. It listens on 127.0.0.1 only, where the trusted identity
 * headers (x-tenant-id, x-principal-id) are allowed.
 */

export type { Fixture } from "./fixtures.js";

export interface LocalSidecarOptions {
  /**
   * Where its memory lives: "memory" (default) is an in-memory PGlite from the
   * shipped template, gone at stop(); `{ dataDir }` a PGlite directory;
   * `{ databaseUrl }` a PostgreSQL database (migrated at start). reset() empties
   * whichever it is, so never point it at data you want to keep.
   */
  store?: "memory" | { dataDir: string } | { databaseUrl: string };
  /** Loaded before the sidecar is handed over, and again by every reset(). */
  fixtures?: readonly Fixture[];
  /** TCP port on 127.0.0.1; default 0, a free one. */
  port?: number;
  /** The identity of the returned `client` (default: the first fixture's, else tenant "test", principal "test"). */
  identity?: { tenantId: string; principalId: string };
  /** More RECALL_* settings for the sidecar (e.g. RECALL_FAULT_ARM_DELAY); RECALL_LOG_LEVEL defaults to "warn". */
  env?: Readonly<Record<string, string>>;
  /** How long to wait for SERVING (default 30 s). */
  startTimeoutMs?: number;
}

export interface LocalSidecar {
  /** "127.0.0.1:PORT": for any gRPC client (grpc-js, connect-es, grpcurl). */
  readonly address: string;
  readonly port: number;
  /** An SDK client of `identity`. */
  readonly client: RecallClient;
  /** Another SDK client on this sidecar, for another principal (closed by stop()). */
  clientFor(identity: { tenantId: string; principalId: string }): RecallClient;
  /** Erases every principal's memory, traces included, and loads the fixtures again. */
  reset(): Promise<void>;
  /** Stops the sidecar gracefully and closes the clients. Resolves with its exit code. */
  stop(): Promise<number | null>;
  /** The sidecar's log (JSON lines on its stderr), for a failing test's message. */
  logs(): string;
}

/** Built output, found from src/testing and dist/testing alike (run `npm run build` first in a checkout). */
const CHILD = fileURLToPath(new URL("../../dist/testing/sidecar-child.js", import.meta.url));

/** Log tail kept for error messages. */
const LOG_TAIL = 64_000;

/**
 * Starts a sidecar process on a free port of 127.0.0.1, loads the fixtures,
 * and resolves once it answers SERVING.
 *
 * @example
 * const sidecar = await startLocalSidecar({ fixtures: [{ tenantId: "t", principalId: "andy", file: "memories.jsonl" }] });
 * const session = await sidecar.client.openSession({ scope: "veetbot" });
 * afterEach(() => sidecar.reset());
 * afterAll(() => sidecar.stop());
 */
export async function startLocalSidecar(options: LocalSidecarOptions = {}): Promise<LocalSidecar> {
  const store = options.store ?? "memory";
  const child = fork(CHILD, [], {
    env: {
      PATH: process.env.PATH ?? "",
      RECALL_LOG_LEVEL: "warn",
      RECALL_SHUTDOWN_GRACE_MS: "2000",
      ...options.env,
      // Loopback only, whatever `env` says: the identity headers are trusted there.
      RECALL_HOST: "127.0.0.1",
      RECALL_PORT: String(options.port ?? 0),
      ...storeEnv(store),
    },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let log = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (log = (log + chunk).slice(-LOG_TAIL)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  child.send({ type: "fixtures", fixtures: options.fixtures ?? [] });
  const port = await untilReady(child, exited, options.startTimeoutMs ?? 30_000, () => log);
  const address = `127.0.0.1:${port}`;
  const clients: RecallClient[] = [];
  const clientFor = (identity: { tenantId: string; principalId: string }) => {
    const client = createRecallClient({ address, ...identity });
    clients.push(client);
    return client;
  };
  const first = options.fixtures?.[0];
  const client = clientFor(options.identity ?? (first ? { tenantId: first.tenantId, principalId: first.principalId } : { tenantId: "test", principalId: "test" }));

  let resets = 0;
  let stopped: Promise<number | null> | undefined;
  return {
    address,
    port,
    client,
    clientFor,
    logs: () => log,
    reset() {
      const id = (resets += 1);
      return new Promise<void>((resolve, reject) => {
        const onMessage = (m: { type: string; id?: number; message?: string }) => {
          if (m.id !== id) return;
          child.off("message", onMessage);
          if (m.type === "reset-done") resolve();
          else reject(new Error(`reset failed: ${m.message}`));
        };
        child.on("message", onMessage);
        child.send({ type: "reset", id });
      });
    },
    stop() {
      stopped ??= (async () => {
        for (const c of clients) c.close();
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        return exited;
      })();
      return stopped;
    },
  };
}

function storeEnv(store: NonNullable<LocalSidecarOptions["store"]>): Record<string, string> {
  if (store === "memory") return { RECALL_DATA_DIR: EPHEMERAL_DATA_DIR, RECALL_DATABASE_URL: "" };
  if ("dataDir" in store) return { RECALL_DATA_DIR: store.dataDir, RECALL_DATABASE_URL: "" };
  return { RECALL_DATABASE_URL: store.databaseUrl };
}

function untilReady(child: ChildProcess, exited: Promise<number | null>, timeoutMs: number, log: () => string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`recall sidecar did not start: ${reason}\n${log()}`));
    };
    const timer = setTimeout(() => fail(`no SERVING within ${timeoutMs} ms`), timeoutMs);
    child.on("message", (m: { type: string; port?: number; message?: string }) => {
      if (m.type === "ready") {
        clearTimeout(timer);
        resolve(m.port!);
      } else if (m.type === "failed") fail(m.message ?? "unknown error");
    });
    void exited.then((code) => fail(`exited with ${code}`));
  });
}

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

/**
 * A real PgBouncer (the Debian package) in transaction mode in front of the
 * test PostgreSQL server, on a free loopback port. `.ci/run` installs it;
 * locally the tests that need it are skipped, saying so, when it is missing.
 */

const CANDIDATES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"];

export const PGBOUNCER = CANDIDATES.find((path) => existsSync(path));

/** Why PgBouncer tests are skipped here, or undefined when they run. */
export const PGBOUNCER_MISSING = PGBOUNCER
  ? undefined
  : "pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it): PgBouncer tests skipped";

export interface RunningPgBouncer {
  /** `target` with its host and port replaced by the pooler's. */
  url: string;
  logs(): string;
  stop(): Promise<void>;
}

/** Starts PgBouncer pooling every database of `target`'s server in transaction mode. */
export async function startPgBouncer(target: string): Promise<RunningPgBouncer> {
  if (!PGBOUNCER) throw new Error(PGBOUNCER_MISSING);
  const server = new URL(target);
  const user = decodeURIComponent(server.username || "postgres");
  const dir = await mkdtemp(join(tmpdir(), "recall-pgbouncer-"));
  const port = await freePort();
  await writeFile(join(dir, "userlist.txt"), `"${user}" ""\n`);
  await writeFile(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      // The test server trusts loopback connections; PgBouncer still needs the user in its auth_file.
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 500",
      "default_pool_size = 20",
      // Sent by some clients at start-up; PgBouncer refuses start-up parameters it does not know.
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
  );
  // It refuses to run as root: then it is told to switch to the postgres user, who must read the files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    await chmod(dir, 0o755);
    await chmod(join(dir, "pgbouncer.ini"), 0o644);
    await chmod(join(dir, "userlist.txt"), 0o644);
  }
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (output += c));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));

  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  try {
    await untilServing(url.toString(), () => child.exitCode !== null, () => output);
  } catch (error) {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: url.toString(),
    logs: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function untilServing(url: string, exited: () => boolean, output: () => string): Promise<void> {
  const end = Date.now() + 20_000;
  for (;;) {
    if (exited()) throw new Error(`pgbouncer exited:\n${output()}`);
    const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {}, connect_timeout: 2 });
    try {
      await sql`SELECT 1`;
      return;
    } catch (error) {
      if (Date.now() > end) throw new Error(`pgbouncer did not serve in time: ${String(error)}\n${output()}`);
    } finally {
      await sql.end({ timeout: 1 });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The store kinds the gRPC suites run their sidecar on: through PgBouncer too, where it is installed. */
export const SIDECAR_KINDS = PGBOUNCER ? (["pglite", "postgres", "pgbouncer"] as const) : (["pglite", "postgres"] as const);

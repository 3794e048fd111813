import { afterAll, beforeAll, expect } from "vitest";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";
import { connect, type Clients } from "./grpc-client.js";
import { freshPostgresDatabase } from "./stores.js";

/**
 * The usual integration-test setup, once: a sidecar process from @recall-memory/sidecar/testing
 * (the ephemeral PGlite store, or a fresh PostgreSQL database) started before
 * the file's tests and stopped after them (exit code 0), and the independent
 * grpc-js clients connected to it. The returned objects are live once the
 * file's beforeAll has run.
 */
export function useSidecar(
  kind: "pglite" | "postgres",
  env: Record<string, string> = {},
): { c: Clients; sidecar: Pick<LocalSidecar, "address" | "logs" | "reset"> } {
  let local: LocalSidecar | undefined;
  let clients: Clients | undefined;
  let database: { url: string; drop(): Promise<void> } | undefined;
  beforeAll(async () => {
    database = kind === "postgres" ? await freshPostgresDatabase() : undefined;
    local = await startLocalSidecar({ store: database ? { databaseUrl: database.url } : "memory", env: { RECALL_LOG_LEVEL: "info", ...env } });
    clients = connect(local.address);
  });
  afterAll(async () => {
    clients?.close();
    expect(await local?.stop()).toBe(0);
    await database?.drop();
  });
  const c = new Proxy({} as Clients, { get: (_target, key) => (clients as unknown as Record<PropertyKey, unknown>)[key] });
  return {
    c,
    sidecar: {
      get address() {
        return local!.address;
      },
      logs: () => local!.logs(),
      reset: () => local!.reset(),
    },
  };
}

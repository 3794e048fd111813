import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { POSTGRES_URL, freshPostgresDatabase } from "../support/stores.js";

/**
 * A TCP proxy between the sidecar and PostgreSQL that the test can cut and
 * restore: the database "goes away" for real, without touching the server.
 */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly upstream: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.upstream.port, this.upstream.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }

  async cut(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }
}

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((e: unknown) => e as T);
    if (ok(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("PostgreSQL outage and recovery", () => {
  let sidecar: SidecarProcess;
  let proxy: CuttableProxy;
  let c: Clients;
  let dropDatabase: () => Promise<void>;
  const me = newIdentity();

  beforeAll(async () => {
    const database = await freshPostgresDatabase();
    dropDatabase = database.drop;
    const pg = new URL(POSTGRES_URL);
    proxy = new CuttableProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    await proxy.open();
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    sidecar = await startSidecarProcess("pglite", {
      RECALL_DATABASE_URL: viaProxy.toString(),
      RECALL_HEALTH_INTERVAL_MS: "100",
    });
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    await sidecar?.stop();
    await dropDatabase?.();
  });

  it("goes NOT_SERVING with UNAVAILABLE while the store is down and recovers without losing data", async () => {
    const before = beliefMsg({ statement: "Andy keeps bees on the roof." });
    await unary(c.write, "PutBeliefs", { beliefs: [before] }, me);
    await proxy.cut();

    const down = await eventually(() => unary(c.health, "Check", { service: "" }, {}), (r) => r.status === "NOT_SERVING");
    // The whole reply (or the probe's error) in the failure message, not just a missing field; and, when
    // the probe could not connect, whether the sidecar is still running and what it logged last.
    const exited = `sidecar exit code ${sidecar.child.exitCode}, signal ${sidecar.child.signalCode}; its log ends:\n${sidecar.logs().slice(-4000)}`;
    expect(down, exited).toMatchObject({ status: "NOT_SERVING" });
    const search = await failure(unary(c.memory, "Search", { text: "bees" }, me));
    expect(search.code).toBe(grpc.status.UNAVAILABLE);
    const lost = beliefMsg({ statement: "Andy sold the bees." });
    const write = await failure(unary(c.write, "PutBeliefs", { beliefs: [lost] }, me));
    expect(write.code).toBe(grpc.status.UNAVAILABLE);

    await proxy.open();
    const up = await eventually(() => unary(c.health, "Check", { service: "" }, {}), (r) => r.status === "SERVING");
    expect(up).toMatchObject({ status: "SERVING" });
    // The earlier write survived; the refused one was refused, not half-done; a retry lands.
    const { result } = await unary(c.memory, "Search", { text: "bees" }, me);
    expect(result.items.map((i: { belief_id: string }) => i.belief_id)).toEqual([before.belief_id]);
    const retried = await unary(c.write, "PutBeliefs", { beliefs: [lost] }, me);
    expect(retried.written).toBe(1);
    expect(sidecar.logs()).toContain("store unreachable: NOT_SERVING");
  });
});

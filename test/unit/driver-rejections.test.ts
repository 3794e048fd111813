import * as net from "node:net";
import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { driverRejectionListener, isDriverError } from "../../src/store/postgres/driver-rejections.js";
import { FaultProxy } from "../support/fault-proxy.js";
import { POSTGRES_URL } from "../support/stores.js";

/** What the driver itself rejects with, got from the real driver, not built by hand. */
async function driverErrors(): Promise<Record<string, unknown>> {
  const errors: Record<string, unknown> = {};
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  errors.server = await sql`select 1 / 0`.catch((e: unknown) => e);
  const sleeping = sql`select pg_sleep(5)`.catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 100));
  await sql.end({ timeout: 0 });
  errors.destroyed = await sleeping;
  errors.ended = await sql`select 1`.catch((e: unknown) => e);

  // The connection lost while a statement waits for its answer.
  const proxy = await FaultProxy.for(POSTGRES_URL);
  proxy.cutWhenSent("select 42");
  const cut = postgres(proxy.via(POSTGRES_URL), { max: 1, onnotice: () => {} });
  errors.closed = await cut`select 42`.catch((e: unknown) => e);
  await cut.end({ timeout: 0 });
  await proxy.close();

  // A port nothing listens on.
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const refused = postgres({ host: "127.0.0.1", port, max: 1, connect_timeout: 2 });
  errors.refused = await refused`select 1`.catch((e: unknown) => e);
  await refused.end({ timeout: 0 });
  return errors;
}

describe("the database driver's rejections nobody waits for", () => {
  let real: Record<string, unknown>;
  beforeAll(async () => {
    real = await driverErrors();
  });

  it("are told from every other error", () => {
    expect(Object.fromEntries(Object.entries(real).map(([k, e]) => [k, (e as { code?: string }).code]))).toEqual({
      server: "22012",
      destroyed: "CONNECTION_DESTROYED",
      ended: "CONNECTION_ENDED",
      closed: "CONNECTION_CLOSED",
      refused: "ECONNREFUSED",
    });
    for (const [kind, error] of Object.entries(real)) expect(isDriverError(error), kind).toBe(true);

    // Ours, or nobody's: a bug to surface, not an outage to ride out.
    const ownClosed = Object.assign(new Error("transaction connection closed"), { code: "CONNECTION_CLOSED" });
    const resetWithoutSyscall = Object.assign(new Error("reset"), { code: "ECONNRESET" });
    for (const other of [new Error("boom"), new TypeError("x is null"), ownClosed, resetWithoutSyscall, undefined, "CONNECTION_CLOSED", { code: "57P01" }]) {
      expect(isDriverError(other), String(other)).toBe(false);
    }
  });

  it("are logged and the process goes on; anything else is thrown again, ending it as Node would", () => {
    const warned: unknown[] = [];
    const listener = driverRejectionListener({ warn: (o: unknown) => warned.push(o) } as never);
    listener(real.destroyed);
    expect(warned).toEqual([{ err: real.destroyed }]);
    const bug = new TypeError("x is null");
    expect(() => listener(bug)).toThrow(bug);
    expect(warned).toHaveLength(1);
  });
});

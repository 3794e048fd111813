import { describe, expect, it } from "vitest";
import { instrumentedSqlClient } from "../../src/metrics/store-metrics.js";
import { createMetricsRegistry } from "../../src/metrics/registry.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { parsePrometheusText } from "../support/prometheus-text.js";

/** A fake store whose statements wait until released, or fail as told. */
function fakeClient() {
  const waiting: (() => void)[] = [];
  const client: SqlClient = {
    kind: "postgres",
    query: async (text) => {
      if (text === "down") throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      if (text === "bad") throw Object.assign(new Error("syntax error"), { code: "42601" });
      await new Promise<void>((resolve) => waiting.push(resolve));
      return [];
    },
    exec: async () => {},
    transaction: async (work) => work(client),
    listen: async () => async () => {},
    close: async () => {},
  };
  return { client, release: () => waiting.splice(0).forEach((r) => r()) };
}

describe("store pool metrics", () => {
  it("counts statements in flight against the pool size, and failures by kind", async () => {
    const registry = createMetricsRegistry();
    const fake = fakeClient();
    const db = instrumentedSqlClient(fake.client, registry, 10);
    const scrape = async () => parsePrometheusText(await registry.metrics());

    const running = [db.query("SELECT 1"), db.query("SELECT 2")];
    expect((await scrape()).value("recall_store_pool_in_use", { store: "postgres" })).toBe(2);
    expect((await scrape()).value("recall_store_pool_max", { store: "postgres" })).toBe(10);
    fake.release();
    await Promise.all(running);
    expect((await scrape()).value("recall_store_pool_in_use", { store: "postgres" })).toBe(0);

    await expect(db.query("down")).rejects.toThrow("ECONNREFUSED");
    await expect(db.query("bad")).rejects.toThrow("syntax error");
    await expect(db.query("bad")).rejects.toThrow("syntax error");
    const m = await scrape();
    expect(m.value("recall_store_errors_total", { store: "postgres", kind: "unavailable" })).toBe(1);
    expect(m.value("recall_store_errors_total", { store: "postgres", kind: "other" })).toBe(2);
    expect(m.value("recall_store_pool_in_use", { store: "postgres" })).toBe(0);
  });
});

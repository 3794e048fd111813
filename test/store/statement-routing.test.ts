import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_KINDS, type TestStore } from "../support/stores.js";
import { belief, episode, newPrincipal } from "../support/fixtures.js";
import { fleetScan } from "../../src/store/fleet-scan.js";
import { loadParser, routingProblems, TENANT_TABLES } from "../support/statement-routing.js";
import { filterFor, lexicalQuery } from "./store-helpers.js";

/**
 * The schema and statements distribute on Citus by tenant_id
 * (docs/scale-out.md). Every store suite checks each statement the store
 * issues as it runs (test/support/stores.ts, store-helpers.ts useStore);
 * this file checks the checker and the schema.
 */
describe("the statement-routing check", () => {
  beforeAll(loadParser);

  it.each([
    ["a tenant table without tenant_id = $n", "SELECT * FROM beliefs b WHERE b.principal_id = $1", ["p"], "no tenant_id"],
    ["an OR that does not pin", "SELECT * FROM beliefs b WHERE b.tenant_id = $1 OR b.principal_id = $2", ["t", "p"], "no tenant_id"],
    ["a join on something other than tenant_id", "SELECT * FROM beliefs b JOIN episodes e ON e.principal_id = b.principal_id WHERE b.tenant_id = $1", ["t"], "episodes e"],
    ["a correlated subquery that forgets the tenant", "SELECT * FROM beliefs b WHERE b.tenant_id = $1 AND EXISTS (SELECT 1 FROM citations c WHERE c.belief_id = b.belief_id)", ["t"], "citations c"],
    ["two tenants in one statement", "SELECT * FROM beliefs b, episodes e WHERE b.tenant_id = $1 AND e.tenant_id = $2", ["t", "u"], "spans tenants"],
    ["one arm of a UNION", "SELECT belief_id FROM beliefs WHERE tenant_id = $1 UNION SELECT episode_id FROM episodes", ["t"], "episodes"],
    ["an INSERT that does not set tenant_id", "INSERT INTO citations (principal_id) VALUES ($1)", ["p"], "does not set tenant_id"],
    ["an UPDATE across tenants", "UPDATE beliefs SET utility = 0 WHERE principal_id = $1", ["p"], "no tenant_id"],
    ["a statement it does not understand", "TRUNCATE beliefs", [], "outside"],
  ])("flags %s", (_what, text, params, problem) => {
    expect(routingProblems(text, params).join("; ")).toContain(problem);
  });

  it.each([
    ["a pinned read", "SELECT * FROM beliefs b WHERE b.tenant_id = $1 AND b.principal_id = $2", ["t", "p"]],
    ["a co-located join", "SELECT * FROM beliefs b JOIN episodes e ON e.tenant_id = b.tenant_id WHERE b.tenant_id = $1::text", ["t"]],
    ["a correlated subquery on tenant_id", "SELECT * FROM beliefs b WHERE b.tenant_id = $1 AND EXISTS (SELECT 1 FROM citations c WHERE c.tenant_id = b.tenant_id)", ["t"]],
    ["an INSERT ... SELECT from a pinned row", "INSERT INTO citations (tenant_id, principal_id) SELECT b.tenant_id, b.principal_id FROM beliefs b WHERE b.tenant_id = $1", ["t"]],
    ["tables that are not distributed", "SELECT version FROM schema_migrations", []],
  ])("passes %s", (_what, text, params) => {
    expect(routingProblems(text, params)).toEqual([]);
  });

  it("lets a declared fleet scan read across tenants, but only as a plain read joined on tenant_id", () => {
    expect(routingProblems(fleetScan("SELECT DISTINCT tenant_id FROM recall_traces WHERE created_at <= $1"), [null])).toEqual([]);
    expect(routingProblems(fleetScan("SELECT tenant_id FROM recall_traces FOR UPDATE SKIP LOCKED"))).toEqual([
      "a fleet scan must be a plain read: no write, no row lock",
    ]);
    expect(routingProblems(fleetScan("SELECT 1 FROM beliefs b JOIN episodes e ON e.principal_id = b.principal_id"))).toEqual([
      "a fleet scan joins tenant tables on something other than tenant_id",
    ]);
  });
});

describe.each(STORE_KINDS)("a schema that distributes by tenant_id ($kind)", ({ open }) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await open();
  });
  afterAll(() => t.dispose());

  it("names every table with a tenant_id column a tenant table, and none carries a trigger", async () => {
    const tables = await t.store.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
       WHERE column_name = 'tenant_id' AND table_schema = current_schema() ORDER BY table_name`,
    );
    // belief_embeddings exists only with the semantic arm on.
    expect(tables.map((r) => r.table_name)).toEqual([...TENANT_TABLES].filter((n) => n !== "belief_embeddings").sort());
    const triggers = await t.store.db.query(
      `SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
       WHERE NOT g.tgisinternal AND c.relname = ANY($1::text[])`,
      [[...TENANT_TABLES]],
    );
    expect(triggers).toEqual([]);
  });

  it("sees the statements the store issues, and every one of them is routed by tenant", async () => {
    const p = newPrincipal();
    const before = t.routing.statements;
    await t.store.putBeliefs(p, [belief({ subject: "Kim", statement: "Kim rows." })]);
    await t.store.appendEpisodes(p, [episode()]);
    await t.store.lexicalCandidates(filterFor(p), lexicalQuery(["rows"]), 10);
    await t.store.traces.tenantsWithUnsettledFeedback(new Date());
    expect(t.routing.statements - before).toBeGreaterThanOrEqual(6);
    expect(t.routing.problems).toEqual([]);
  });
});

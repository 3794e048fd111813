import { describe, expect, it } from "vitest";
import { loadBeliefRows } from "../../src/principal-index/loading.js";
import { PrincipalIndexes } from "../../src/principal-index/index-router.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { STORE_KINDS } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(STORE_KINDS)("principal index background load ($kind)", ({ open }) => {
  const store = useStore(open);

  it("a load started by a call outlives the call's store deadline (it is the sidecar's work, not the call's)", async () => {
    const p = newPrincipal("load");
    await store().putBeliefs(p, [belief({ subject: "editor", statement: "The user edits in Helix." })]);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 16 * 1024 * 1024, headCheckMs: 60_000, loadDelayMs: 30 });
    const head = await store().head(p);
    // The call's deadline passes before the scheduled load starts.
    const first = await indexes.sourceFor(p, head, Date.now() + 5);
    expect(first).toBe(store().candidates);
    await until(() => indexes.stats.loads + indexes.stats.loadFailures > 0);
    expect(indexes.stats.loadFailures).toBe(0);
    expect(indexes.stats.loads).toBe(1);
    expect(await indexes.sourceFor(p, head)).not.toBe(store().candidates);
  });

  it("reads a principal's rows a page at a time, every row once and only its own, so other statements can run between pages", async () => {
    const p = newPrincipal("pages");
    const other = newPrincipal("pages-other");
    const beliefs = Array.from({ length: 11 }, (_, i) => belief({ subject: `s${i}`, statement: `Statement number ${i}.` }));
    await store().putBeliefs(p, beliefs);
    await store().putBeliefs(other, [belief({ statement: "Not theirs." })]);
    const pages: string[][] = [];
    for await (const page of loadBeliefRows(store().db, p, null, 4)) pages.push(page.map((r) => String(r.belief_id)));
    expect(pages.map((page) => page.length)).toEqual([4, 4, 3]);
    expect(pages.flat().sort()).toEqual(beliefs.map((b) => b.beliefId).sort());
  });
});

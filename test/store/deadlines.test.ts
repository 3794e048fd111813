import { describe, expect, it } from "vitest";
import { StoreTimeoutError } from "../../src/store/store-deadline.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { useStore } from "./store-helpers.js";

/**
 * Issue 12, defect 3: a write that failed must not commit later. A write is
 * bounded by its call's store deadline: nothing is sent after it, in
 * particular no COMMIT, and the caller hears by then that nothing was written.
 */
describe.each(STORE_KINDS)("store deadlines ($kind)", ({ open }) => {
  const store = useStore(open);

  /** Holds the principal's head row (and on PGlite the one connection) until released. */
  async function holdHead(p: ReturnType<typeof newPrincipal>) {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = store().db.transaction(async (tx) => {
      await tx.query("SELECT position FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2 FOR UPDATE", [
        p.tenantId,
        p.principalId,
      ]);
      locked();
      await released;
    });
    await isLocked;
    return { release, holder };
  }

  it("a write still waiting when its deadline passes fails as not written, and never commits", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief()]);
    const held = await holdHead(p);
    const late = belief();
    const write = store().at(Date.now() + 300).putBeliefs(p, [late]);
    const outcome = await Promise.race([
      write.then(
        () => "committed",
        (e: unknown) => e,
      ),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 3000)),
    ]);
    held.release();
    await held.holder;
    expect(outcome).toBeInstanceOf(StoreTimeoutError);
    // Whatever the abandoned attempt does once the lock is free, it must not commit.
    await new Promise((r) => setTimeout(r, 300));
    await write.catch(() => {});
    expect(await store().beliefsById(p, [late.beliefId])).toEqual([]);
    expect((await store().head(p)).position).toBe(1);
  });

  it("sends nothing once the deadline has passed", async () => {
    const p = newPrincipal();
    const b = belief();
    await expect(store().at(Date.now() - 1).putBeliefs(p, [b])).rejects.toBeInstanceOf(StoreTimeoutError);
    await expect(store().at(Date.now() - 1).head(p)).rejects.toBeInstanceOf(StoreTimeoutError);
    expect(await store().beliefsById(p, [b.beliefId])).toEqual([]);
  });

  it("a deadline the caller passes itself still wins over the store's bound, and an unbounded store has none", async () => {
    const p = newPrincipal();
    await expect(store().at(Date.now() + 10_000).head(p, Date.now() - 1)).rejects.toBeInstanceOf(StoreTimeoutError);
    await expect(store().at(Date.now() - 1).head(p, Date.now() + 10_000)).rejects.toBeInstanceOf(StoreTimeoutError);
    expect(store().at(undefined)).toBe(store());
    expect((await store().head(p)).position).toBe(0);
  });

  it("a write with time to spare commits as usual", async () => {
    const p = newPrincipal();
    const b = belief();
    expect(await store().at(Date.now() + 10_000).putBeliefs(p, [b])).toEqual({ written: 1, position: 1 });
    expect((await store().beliefsById(p, [b.beliefId])).length).toBe(1);
  });
});

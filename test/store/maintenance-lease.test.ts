import { describe, expect, it } from "vitest";
import { claimLease } from "../../src/store/maintenance-lease.js";
import { STORE_KINDS } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

/** Fleet-wide maintenance runs once per interval across the sidecars sharing a database. */
describe.each(STORE_KINDS)("maintenance lease ($kind)", ({ open }) => {
  const store = useStore(open);

  it("goes to exactly one of many sidecars claiming at once, and to nobody else until it runs out", async () => {
    const holders = ["a", "b", "c", "d", "e"];
    const won = await Promise.all(holders.map((h) => claimLease(store().db, "sweep-race", 60_000, h)));
    expect(won.filter(Boolean)).toHaveLength(1);
    for (const h of holders) expect(await claimLease(store().db, "sweep-race", 60_000, h)).toBe(false);
  });

  it("is taken over once it has run out", async () => {
    expect(await claimLease(store().db, "sweep-expiry", 50, "a")).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(await claimLease(store().db, "sweep-expiry", 60_000, "b")).toBe(true);
    expect(await claimLease(store().db, "sweep-expiry", 60_000, "a")).toBe(false);
  });

  it("keeps leases of different names apart", async () => {
    expect(await claimLease(store().db, "one", 60_000, "a")).toBe(true);
    expect(await claimLease(store().db, "two", 60_000, "b")).toBe(true);
  });
});

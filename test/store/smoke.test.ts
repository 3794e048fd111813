import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_KINDS, type TestStore } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";

describe.each(STORE_KINDS)("store smoke ($kind)", ({ open }) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await open();
  });
  afterAll(async () => t?.dispose());

  it("writes a belief and reads it back by id", async () => {
    const p = newPrincipal();
    const b = belief();
    const res = await t.store.putBeliefs(p, [b]);
    expect(res).toEqual({ written: 1, position: 1 });
    const [back] = await t.store.beliefsById(p, [b.beliefId]);
    expect(back?.statement).toBe(b.statement);
    expect(back?.storePosition).toBe(1);
  });
});

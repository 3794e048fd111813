import { describe, expect, it } from "vitest";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { useStore } from "./store-helpers.js";

/** Ids that share their first eight hex digits with each other, and one that does not. */
const A1 = "aaaaaaaa-0000-4000-8000-000000000001";
const A2 = "aaaaaaaa-ffff-4fff-bfff-ffffffffffff";
const A3 = "aaaaaaaa-1234-4000-8000-000000000003";
const B1 = "aaaaaaab-0000-4000-8000-000000000001";

describe.each(STORE_KINDS)("short id neighbours ($kind)", ({ open }) => {
  const store = useStore(open);

  it("finds the principal's other beliefs with the same eight-digit short id, at both ends of the range", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief({ beliefId: A1 }), belief({ beliefId: A2 }), belief({ beliefId: B1 })]);
    const found = await store().shortIdNeighbours(p, [A3, A1, B1]);
    expect(Object.fromEntries(found)).toEqual({ [A3]: [A1, A2], [A1]: [A2] });
  });

  it("never looks at another principal's or tenant's beliefs", async () => {
    const p = newPrincipal();
    const other = newPrincipal();
    await store().putBeliefs(other, [belief({ beliefId: A1 })]);
    await store().putBeliefs({ tenantId: `${p.tenantId}-x`, principalId: p.principalId }, [belief({ beliefId: A2 })]);
    expect((await store().shortIdNeighbours(p, [A3])).size).toBe(0);
  });
});

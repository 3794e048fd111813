import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { HeadTracker } from "../../src/recall/moments/head-tracker.js";
import type { StoreHead } from "../../src/store/memory-store.js";

const p: Principal = { tenantId: "t", principalId: "p" };

/** A head source whose position the test moves, counting reads. */
function source() {
  const state = { position: 0, reads: 0 };
  return Object.assign(state, {
    async head(): Promise<StoreHead> {
      state.reads += 1;
      return { position: state.position, updatedAt: null, erasedPosition: null };
    },
  });
}

describe("head tracker without a notification connection", () => {
  it("polls: a known head is served for pollMs, then read again", async () => {
    const db = source();
    let now = 0;
    const heads = new HeadTracker(db, { listener: null, pollMs: 1000, now: () => now });
    await heads.start();
    expect(heads.freshness).toBe("polling");
    expect(heads.stalenessBoundMs).toBe(1000);
    expect((await heads.head(p)).position).toBe(0);
    db.position = 3; // a write through another sidecar
    now = 999;
    expect((await heads.head(p)).position).toBe(0);
    expect(db.reads).toBe(1);
    now = 1000;
    expect((await heads.head(p)).position).toBe(3);
    expect(db.reads).toBe(2);
    await heads.stop();
  });

  it("forgets a head written through this sidecar at once", async () => {
    const db = source();
    const heads = new HeadTracker(db, { listener: null, pollMs: 60_000, now: () => 0 });
    await heads.start();
    await heads.head(p);
    db.position = 1;
    heads.forget(p);
    expect((await heads.head(p)).position).toBe(1);
    await heads.stop();
  });

  it("listening: a known head is served until a notification moves it, however old", async () => {
    const db = source();
    let notify: (payload: string) => void = () => {};
    let now = 0;
    const listener = {
      async listen(_channel: string, onNotify: (payload: string) => void) {
        notify = onNotify;
        return async () => {};
      },
    };
    const heads = new HeadTracker(db, { listener, pollMs: 10, now: () => now });
    await heads.start();
    expect(heads.freshness).toBe("listening");
    expect(heads.stalenessBoundMs).toBeNull();
    await heads.head(p);
    now = 1_000_000;
    expect(db.reads).toBe(1);
    expect((await heads.head(p)).position).toBe(0);
    notify(JSON.stringify(["t", "p", 5, new Date(0).toISOString()]));
    expect((await heads.head(p)).position).toBe(5);
    expect(db.reads).toBe(1);
    await heads.stop();
  });
});

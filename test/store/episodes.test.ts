import { describe, expect, it } from "vitest";
import { SENSITIVITY, type Episode } from "../../src/domain/model.js";
import type { EpisodeQuery } from "../../src/store/memory-store.js";
import { STORE_KINDS } from "../support/stores.js";
import { T0, episode, newPrincipal } from "../support/fixtures.js";
import { ascendingUuids, episodeQuery, useStore } from "./store-helpers.js";

const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);

/** The canonical episode order: occurred_at, then sequence, then episode_id. */
function inOrder(episodes: Episode[]): Episode[] {
  return [...episodes].sort(
    (a, b) =>
      a.occurredAt.getTime() - b.occurredAt.getTime() ||
      a.sequence - b.sequence ||
      (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0),
  );
}

/** Nine episodes with ties on occurred_at and on (occurred_at, sequence), appended out of order. */
function tangle(): Episode[] {
  const [i1, i2, i3] = ascendingUuids(3) as [string, string, string];
  return [
    episode({ occurredAt: minutes(2), sequence: 0, content: "later" }),
    episode({ episodeId: i3, occurredAt: minutes(1), sequence: 5, content: "tie c" }),
    episode({ occurredAt: minutes(0), sequence: 9, content: "first minute, high sequence" }),
    episode({ episodeId: i1, occurredAt: minutes(1), sequence: 5, content: "tie a" }),
    episode({ occurredAt: minutes(1), sequence: 2, content: "low sequence" }),
    episode({ occurredAt: minutes(0), sequence: 1, content: "first" }),
    episode({ episodeId: i2, occurredAt: minutes(1), sequence: 5, content: "tie b" }),
    episode({ occurredAt: minutes(3), sequence: 0, content: "last" }),
    episode({ occurredAt: minutes(1), sequence: 10, content: "high sequence" }),
  ];
}

describe.each(STORE_KINDS)("episodes ($kind)", ({ open }) => {
  const store = useStore(open);

  it("reads episodes in occurred_at, sequence, episode_id order, every field intact", async () => {
    const p = newPrincipal();
    const all = tangle();
    await store().appendEpisodes(p, all);
    const back = await store().episodes(p, episodeQuery());
    expect(back).toEqual(inOrder(all));
    expect(back.map((e) => e.content).slice(0, 6)).toEqual([
      "first",
      "first minute, high sequence",
      "low sequence",
      "tie a",
      "tie b",
      "tie c",
    ]);
  });

  it("pages with `after` without overlap or gaps, through ties", async () => {
    const p = newPrincipal();
    const all = tangle();
    await store().appendEpisodes(p, all);
    const pages: Episode[][] = [];
    let after: EpisodeQuery["after"] = null;
    for (;;) {
      const page = await store().episodes(p, episodeQuery({ limit: 4, after }));
      if (page.length === 0) break;
      pages.push(page);
      const last = page[page.length - 1]!;
      after = { occurredAt: last.occurredAt, sequence: last.sequence, episodeId: last.episodeId };
      expect(pages.length).toBeLessThan(10);
    }
    expect(pages.map((pg) => pg.length)).toEqual([4, 4, 1]);
    expect(pages.flat()).toEqual(inOrder(all));
    // A cursor in the middle of a (occurred_at, sequence) tie continues inside it.
    const ties = inOrder(all).filter((e) => e.sequence === 5);
    const next = await store().episodes(
      p,
      episodeQuery({ limit: 2, after: { occurredAt: minutes(1), sequence: 5, episodeId: ties[0]!.episodeId } }),
    );
    expect(next).toEqual(ties.slice(1));
  });

  it("excludes archival episodes unless includeArchival", async () => {
    const p = newPrincipal();
    const live = episode({ sequence: 1 });
    const archived = episode({ sequence: 2, archival: true });
    await store().appendEpisodes(p, [live, archived]);
    expect(await store().episodes(p, episodeQuery())).toEqual([live]);
    expect(await store().episodes(p, episodeQuery({ includeArchival: true }))).toEqual([live, archived]);
  });

  it("never returns an episode above the sensitivity ceiling", async () => {
    const p = newPrincipal();
    const levels = [SENSITIVITY.public, SENSITIVITY.personal, SENSITIVITY.confidential, SENSITIVITY.restricted];
    const all = levels.map((sensitivity, i) => episode({ sequence: i, sensitivity }));
    await store().appendEpisodes(p, all);
    for (const ceiling of levels) {
      const back = await store().episodes(p, episodeQuery({ sensitivityCeiling: ceiling, includeArchival: true }));
      expect(back).toEqual(all.filter((e) => e.sensitivity <= ceiling));
    }
  });

  it("filters by session and by [startTime, endTime)", async () => {
    const p = newPrincipal();
    const a0 = episode({ sessionId: "a", occurredAt: minutes(0) });
    const a1 = episode({ sessionId: "a", occurredAt: minutes(1) });
    const a2 = episode({ sessionId: "a", occurredAt: minutes(2) });
    const b1 = episode({ sessionId: "b", occurredAt: minutes(1) });
    await store().appendEpisodes(p, [a0, a1, a2, b1]);
    expect(await store().episodes(p, episodeQuery({ sessionId: "a" }))).toEqual([a0, a1, a2]);
    expect(await store().episodes(p, episodeQuery({ sessionId: "b" }))).toEqual([b1]);
    expect(await store().episodes(p, episodeQuery({ sessionId: "a", startTime: minutes(1), endTime: minutes(2) }))).toEqual([a1]);
    expect((await store().episodes(p, episodeQuery({ startTime: minutes(1) }))).map((e) => e.episodeId).sort()).toEqual(
      [a1, a2, b1].map((e) => e.episodeId).sort(),
    );
  });

  it("honours the limit", async () => {
    const p = newPrincipal();
    const all = tangle();
    await store().appendEpisodes(p, all);
    expect(await store().episodes(p, episodeQuery({ limit: 3 }))).toEqual(inOrder(all).slice(0, 3));
  });
});

import { describe, expect, it } from "vitest";
import { userView, type ShownBelief, type TurnTrace } from "../../src/domain/trace-user-view.js";
import { uid } from "./unit-helpers.js";

const AT = (s: number) => new Date(Date.UTC(2026, 6, 24, 9, 0, s));

function trace(overrides: Partial<TurnTrace>): TurnTrace {
  return {
    traceId: uid(900),
    moment: "in_turn",
    createdAt: AT(10),
    asOf: AT(5),
    returned: [],
    returnedBands: [],
    carried: [],
    citedThisTurn: [],
    blockedWithinCeiling: [],
    consideredNotShown: 0,
    ...overrides,
  };
}

function shown(traceId: string, beliefId: string, overrides: Partial<ShownBelief> = {}): ShownBelief {
  return {
    traceId,
    beliefId,
    subject: "Andy",
    statement: `statement of ${beliefId}`,
    learnedAt: AT(0),
    originScope: "veetbot",
    authority: "user",
    sourceEpisodeId: null,
    ...overrides,
  };
}

describe("userView", () => {
  const snap = trace({ traceId: uid(901), moment: "snapshot", createdAt: AT(1), asOf: AT(0), returned: [uid(1), uid(2)], returnedBands: ["high", "medium"], consideredNotShown: 4 });
  const turn = trace({
    traceId: uid(902),
    createdAt: AT(20),
    asOf: AT(19),
    returned: [uid(3), uid(2), uid(4)],
    returnedBands: ["low", "medium", "high"],
    carried: [uid(3)],
    citedThisTurn: [uid(2)],
    blockedWithinCeiling: [uid(4)],
    consideredNotShown: 7,
  });
  const rows = [shown(snap.traceId, uid(1)), shown(snap.traceId, uid(2)), shown(turn.traceId, uid(3), { originScope: "atlas" }), shown(turn.traceId, uid(2))];

  it("lists the snapshot's beliefs first, then the turn's, each once, with the moments that showed it", () => {
    const view = userView("t-1", [turn, snap], rows);
    expect(view.turnId).toBe("t-1");
    expect(view.moments).toEqual(["snapshot", "in_turn"]);
    expect(view.beliefs.map((b) => [b.beliefId, b.moments, b.confidenceBand])).toEqual([
      [uid(1), ["snapshot"], "high"],
      [uid(2), ["snapshot", "in_turn"], "medium"],
      [uid(3), ["in_turn"], "low"],
    ]);
  });

  it("marks used only what was cited this turn, and carried what the block attributed", () => {
    const view = userView("t-1", [snap, turn], rows);
    const by = new Map(view.beliefs.map((b) => [b.beliefId, b]));
    expect(by.get(uid(2))?.used).toBe(true);
    expect(by.get(uid(1))?.used).toBe(false);
    expect(by.get(uid(3))).toMatchObject({ carried: true, used: false, originScope: "atlas" });
  });

  it("counts considered-not-shown and withheld beliefs, never listing them; as_of is the latest recall's", () => {
    const view = userView("t-1", [snap, turn], rows);
    expect(view.consideredNotShown).toBe(11);
    expect(view.withheldBySafety).toBe(1);
    expect(view.beliefs.map((b) => b.beliefId)).not.toContain(uid(4));
    expect(view.asOf).toEqual(AT(19));
  });

  it("leaves out what the store did not return (above the ceiling, blocked, gone) and keeps no operator data", () => {
    const view = userView("t-1", [snap, turn], rows.filter((r) => r.beliefId !== uid(1)));
    expect(view.beliefs.map((b) => b.beliefId)).toEqual([uid(2), uid(3)]);
    for (const b of view.beliefs) {
      expect(Object.keys(b).sort()).toEqual(
        ["authority", "beliefId", "carried", "confidenceBand", "learnedAt", "moments", "originScope", "sourceEpisodeId", "statement", "subject", "used"].sort(),
      );
    }
    expect(Object.keys(view).sort()).toEqual(["asOf", "beliefs", "consideredNotShown", "moments", "turnId", "withheldBySafety"]);
  });

  it("a trace recorded before bands were kept shows no band rather than a guessed one", () => {
    const old = trace({ returned: [uid(5)], returnedBands: [] });
    expect(userView("t", [old], [shown(old.traceId, uid(5))]).beliefs[0]?.confidenceBand).toBeNull();
  });
});

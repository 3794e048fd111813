import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { heldBelowRelativeFloor, type FloorArmOutcome } from "../../src/recall/rank/relative-floor.js";

/**
 * The relevance floor's relative part, on the arms' own scores (the
 * figures are those the two stores give for the demo memory and the
 * benchmark fixture; the pipeline tests run the same cases end to end).
 */
const SHARE = P.profiles.task.relativeFloor;
const TYPE = P.typeAnchorWeight;

type Hit = [id: string, score: number, type?: string];
const arm = (name: string, hits: Hit[]): FloorArmOutcome => ({
  arm: name,
  candidates: hits.map(([beliefId, armScore, beliefType = "preference"]) => ({ belief: { beliefId, beliefType }, armScore })),
});
const held = (outcomes: FloorArmOutcome[], share = SHARE) => [...heldBelowRelativeFloor(outcomes, share, TYPE)].sort();

describe("relative floor", () => {
  it("is on for in-turn recall and search, off for the snapshot core", () => {
    expect(P.profiles.task.relativeFloor).toBe(0.4);
    expect(P.profiles.deep.relativeFloor).toBe(0.4);
    expect(P.profiles.core.relativeFloor).toBe(0);
  });

  it("the editor case: what only the subject's name matches is held back", () => {
    // "what editor does Andy use": every Andy belief matches "Andy"; only one matches "editor".
    const lexical = arm("lexical", [
      ["helix", 5.73, "preference"],
      ["maintainer", 1.963, "user_model_attr"],
      ["berlin", 1.702, "user_model_attr"],
      ["rust", 1.702, "project_fact"],
      ["concise", 1.63, "preference"],
    ]);
    expect(held([lexical])).toEqual(["berlin", "concise", "maintainer", "rust"]);
  });

  it("keeps every lexical match at or above the share of the best one", () => {
    const lexical = arm("lexical", [
      ["a", 10],
      ["b", 4],
      ["c", 3.999],
    ]);
    expect(held([lexical])).toEqual(["c"]);
    expect(held([lexical], 0.3)).toEqual([]);
  });

  it("the coffee case: type-only anchor matches stay out when the question's words found a belief of that type", () => {
    // "How do I take my coffee?": the preference anchor brings every preference at 0.25;
    // the coffee preference also matches "coffee", a payments fact matches "take".
    const structured = arm("structured", [
      ["coffee", TYPE],
      ["tabs", TYPE],
      ["padel", TYPE],
    ]);
    const lexical = arm("lexical", [
      ["coffee", 5.56],
      ["stripe", 2.661, "project_fact"],
    ]);
    expect(held([structured, lexical])).toEqual(["padel", "tabs"]);
  });

  it("a paraphrase is still found: the anchor stands when no belief of its type matches the words", () => {
    // "How do I like my coffee?" → "Andy takes espresso black"; only a project fact matches "coffee".
    const structured = arm("structured", [
      ["espresso", TYPE],
      ["tea", TYPE],
    ]);
    const lexical = arm("lexical", [["machine", 3.1, "project_fact"]]);
    expect(held([structured, lexical])).toEqual([]);
  });

  it("judges each anchored type on its own (a compound question)", () => {
    const structured = arm("structured", [
      ["coffee", TYPE, "preference"],
      ["tabs", TYPE, "preference"],
      ["wife", TYPE, "relationship"],
      ["sister", TYPE, "relationship"],
    ]);
    const lexical = arm("lexical", [["coffee", 4]]);
    expect(held([structured, lexical])).toEqual(["tabs"]);
  });

  it("holds back a type-only match that the words match only weakly", () => {
    const structured = arm("structured", [
      ["coffee", TYPE],
      ["tabs", TYPE],
    ]);
    const lexical = arm("lexical", [
      ["coffee", 5],
      ["tabs", 1],
    ]);
    expect(held([structured, lexical])).toEqual(["tabs"]);
  });

  it("keeps what another arm found: a named subject, an ownership statement, the recall delta, the semantic arm", () => {
    const structured = arm("structured", [
      ["named", 1],
      ["owned", P.ownedResources.weight, "user_model_attr"],
    ]);
    const lexical = arm("lexical", [
      ["best", 9],
      ["named", 0.5],
      ["owned", 0.5],
      ["delta", 0.5],
      ["semantic", 0.5],
      ["weak", 0.5],
    ]);
    const delta = arm("delta", [["delta", 1]]);
    const semantic = arm("semantic", [["semantic", 0.41]]);
    expect(held([structured, lexical, delta, semantic])).toEqual(["weak"]);
  });

  it("holds nothing back when the share is 0, or when the lexical arm found nothing", () => {
    const structured = arm("structured", [
      ["a", TYPE],
      ["b", TYPE],
    ]);
    const lexical = arm("lexical", [
      ["a", 9],
      ["c", 1],
    ]);
    expect(held([structured, lexical], 0)).toEqual([]);
    // A degraded (or empty) lexical arm: the anchor's matches are all there is.
    expect(held([structured, arm("lexical", [])])).toEqual([]);
  });

  it("never holds back the best lexical match", () => {
    expect(held([arm("lexical", [["only", 0.01]])])).toEqual([]);
  });
});

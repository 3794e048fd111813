import { describe, expect, it } from "vitest";
import { Bm25Index } from "../../src/eval/bm25.js";
import { normaliseDiaIds, parseSessionDate, readConversation, stableUuid } from "../../src/eval/locomo-data.js";
import { aggregate, percentile, scoreQuestion } from "../../src/eval/retrieval-metrics.js";

describe("LoCoMo data", () => {
  it("normalises evidence and provenance ids, malformed ones included", () => {
    expect(normaliseDiaIds("D8:6; D9:17")).toEqual(["D8:6", "D9:17"]);
    expect(normaliseDiaIds("D:11:26")).toEqual(["D11:26"]);
    expect(normaliseDiaIds(["D1:3", "D1:3", "D2:4"])).toEqual(["D1:3", "D2:4"]);
    expect(normaliseDiaIds("D3:1, D3:2")).toEqual(["D3:1", "D3:2"]);
    expect(normaliseDiaIds("")).toEqual([]);
    expect(normaliseDiaIds(undefined)).toEqual([]);
  });

  it("parses session dates", () => {
    expect(parseSessionDate("1:56 pm on 8 May, 2023").toISOString()).toBe("2023-05-08T13:56:00.000Z");
    expect(parseSessionDate("12:04 am on 1 January, 2024").toISOString()).toBe("2024-01-01T00:04:00.000Z");
    expect(() => parseSessionDate("yesterday")).toThrow(/unrecognised/);
  });

  it("makes stable UUID-shaped ids", () => {
    expect(stableUuid("conv-1/D1:1")).toBe(stableUuid("conv-1/D1:1"));
    expect(stableUuid("conv-1/D1:1")).not.toBe(stableUuid("conv-1/D1:2"));
    expect(stableUuid("x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("reads a conversation into beliefs with provenance, episodes and questions", () => {
    const conv = readConversation({
      sample_id: "c1",
      conversation: {
        speaker_a: "Ana",
        speaker_b: "Ben",
        session_1_date_time: "1:56 pm on 8 May, 2023",
        session_1: [
          { speaker: "Ana", dia_id: "D1:1", text: "I adopted a cat." },
          { speaker: "Ben", dia_id: "D1:2", text: "Nice!", blip_caption: "a photo of a cat" },
        ],
      },
      observation: { session_1_observation: { Ana: [["Ana adopted a cat.", "D1:1"]], Ben: [["Ben likes cats.", ["D1:2"]]] } },
      qa: [
        { question: "What did Ana adopt?", answer: "a cat", evidence: ["D1:1"], category: 4 },
        { question: "Unanswerable?", answer: "", evidence: [], category: 5 },
      ],
    });
    expect(conv.speakers).toEqual(["Ana", "Ben"]);
    expect(conv.episodes.map((e) => [e.actor, e.content])).toEqual([
      ["Ana", "I adopted a cat."],
      ["Ben", "Nice! [shares a photo of a cat]"],
    ]);
    expect(conv.beliefs.map((b) => [b.subject, b.statement, b.validFrom.toISOString()])).toEqual([
      ["Ana", "Ana adopted a cat.", "2023-05-08T13:56:00.000Z"],
      ["Ben", "Ben likes cats.", "2023-05-08T13:56:00.000Z"],
    ]);
    expect(conv.beliefs[0]!.sourceEpisodeIds).toEqual([conv.episodes[0]!.episodeId]);
    expect(conv.provenance.get(conv.beliefs[1]!.beliefId)).toEqual(["D1:2"]);
    expect(conv.questions).toEqual([{ question: "What did Ana adopt?", evidence: ["D1:1"], category: 4 }]);
    expect(conv.skipped).toBe(1);
  });
});

describe("retrieval metrics", () => {
  it("scores coverage, completeness and noise at k", () => {
    const ranked = [["D1:1"], ["D9:9"], ["D1:2", "D5:5"], ["D1:3"]];
    expect(scoreQuestion(ranked, ["D1:1", "D1:2"], 1)).toEqual({ frac: 0.5, all: false, noise: 0 });
    expect(scoreQuestion(ranked, ["D1:1", "D1:2"], 3)).toEqual({ frac: 1, all: true, noise: 1 / 3 });
    expect(scoreQuestion([], ["D1:1"], 5)).toEqual({ frac: 0, all: false, noise: null });
  });

  it("aggregates means, leaving empty results out of noise", () => {
    const a = aggregate([
      { frac: 1, all: true, noise: 0.5 },
      { frac: 0, all: false, noise: null },
    ]);
    expect(a).toEqual({ questions: 2, frac: 0.5, all: 0.5, noise: 0.5 });
  });

  it("takes nearest-rank percentiles", () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 95)).toBe(5);
    expect(percentile([], 50)).toBe(0);
  });
});

describe("BM25 baseline", () => {
  it("ranks by term rarity and frequency, deterministically", () => {
    const index = new Bm25Index([
      { id: "a", text: "Ana likes cats" },
      { id: "b", text: "Ana likes dogs" },
      { id: "c", text: "Ana adopted a cat named Miso" },
      { id: "d", text: "Ben likes hiking" },
    ]);
    // "miso" is rare: it decides; "ana" is common and adds little.
    expect(index.search("what is Ana's cat named Miso", 2)).toEqual(["c", "a"]);
    expect(index.search("dogs", 5)).toEqual(["b"]);
    expect(index.search("the a of", 5)).toEqual([]);
  });
});

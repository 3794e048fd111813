import { describe, expect, it } from "vitest";
import { countTokens } from "../../src/recall/render/tokens.js";
import { pick, prng } from "./unit-helpers.js";

describe("countTokens", () => {
  it("counts known strings", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("   \n\t ")).toBe(0);
    expect(countTokens("Hello")).toBe(1);
    expect(countTokens("Hello world")).toBe(2);
    expect(countTokens("Hello, world!")).toBe(4);
    expect(countTokens("Andy prefers concise writing.")).toBe(5);
  });

  it("splits long words into pieces of about 4.5 letters", () => {
    expect(countTokens("abcdefgh")).toBe(1);
    expect(countTokens("abcdefghi")).toBe(2);
    expect(countTokens("internationalization")).toBe(5);
  });

  it("groups digits by three and counts each punctuation mark", () => {
    expect(countTokens("123")).toBe(1);
    expect(countTokens("1234")).toBe(2);
    expect(countTokens("12345678")).toBe(3);
    expect(countTokens("2026-07-24T09:00:00Z")).toBe(13);
    expect(countTokens("[m:8f21a0c3]")).toBe(11);
  });

  it("gives a plausible count for a 40-word English sentence", () => {
    const sentence =
      "The quick brown fox jumps over the lazy dog while the team reviews previous decisions every Friday " +
      "afternoon, because Andy prefers concise writing and wants deploys gated on CI passing on main before " +
      "anything ships to the production servers today.";
    expect(sentence.split(/\s+/)).toHaveLength(40);
    const tokens = countTokens(sentence);
    expect(tokens).toBeGreaterThanOrEqual(30);
    expect(tokens).toBeLessThanOrEqual(60);
  });

  it("gives a rendered memory line about 25 tokens, as the spec's sizing assumes", () => {
    const tokens = countTokens("  [m:8f21a0c3] Andy prefers concise prose-first writing.  (user-stated, high)");
    expect(tokens).toBeGreaterThanOrEqual(15);
    expect(tokens).toBeLessThanOrEqual(35);
  });

  it("is additive over whitespace-separated parts", () => {
    expect(countTokens("Andy prefers tea. Bob prefers coffee.")).toBe(
      countTokens("Andy prefers tea.") + countTokens("Bob prefers coffee."),
    );
  });

  it("is monotone: a prefix never counts more than the whole text (property, seeded)", () => {
    const rand = prng(20260724);
    const alphabet = ["a", "b", "e", "z", "É", "ß", "1", "2", "9", " ", " ", "\n", ".", ",", "-", "[", ":", "😀", "中"];
    for (let run = 0; run < 300; run++) {
      const length = 1 + Math.floor(rand() * 60);
      let text = "";
      for (let i = 0; i < length; i++) text += pick(rand, alphabet);
      let previous = 0;
      for (let i = 1; i <= text.length; i++) {
        const n = countTokens(text.slice(0, i));
        expect(n, JSON.stringify(text.slice(0, i))).toBeGreaterThanOrEqual(previous);
        previous = n;
      }
      // Never fewer pieces than there are non-space, non-letter/digit characters.
      expect(countTokens(text)).toBeGreaterThanOrEqual((text.match(/[.,\-[:]/g) ?? []).length);
    }
  });

  it("grows with repeated text", () => {
    const one = countTokens("Andy prefers concise writing.");
    expect(countTokens("Andy prefers concise writing. ".repeat(10))).toBe(10 * one);
  });

  // Regression, fixed (src/recall/render/tokens.ts:8-16): text without spaces in scripts such as Japanese or Chinese
  // is one "word", so a 7-character Japanese phrase counts 1 token and a 100-character paragraph
  // about 23, where BPE tokenizers give roughly one token per character. The token budget
  // (assemble.ts) can then be overrun several times over by non-Latin beliefs.
  it("counts CJK text at no less than one token per two characters", () => {
    const japanese = "アンディは簡潔な文章を好みます。会議は午前十時以降が良いです。"; // 32 characters
    expect(countTokens(japanese)).toBeGreaterThanOrEqual(16); // counts 10
  });
});

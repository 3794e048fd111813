import { describe, expect, it } from "vitest";
import { lowerCased, StringMemo, StringPairMemo } from "../../src/domain/string-memo.js";

describe("StringPairMemo", () => {
  it("keeps an answer per pair of strings, each pair apart", () => {
    const memo = new StringPairMemo<number>(10);
    memo.set("statement", "Andy", 1);
    memo.set("statement", "Priya", 2);
    memo.set("other", "Andy", 3);
    expect([memo.get("statement", "Andy"), memo.get("statement", "Priya"), memo.get("other", "Andy"), memo.get("other", "Priya")]).toEqual([1, 2, 3, undefined]);
  });

  it("holds at most max answers: when full it starts over, and replacing an answer does not count twice", () => {
    const memo = new StringPairMemo<number>(2);
    memo.set("a", "x", 1);
    memo.set("a", "x", 2);
    memo.set("b", "x", 3);
    expect([memo.get("a", "x"), memo.get("b", "x")]).toEqual([2, 3]);
    memo.set("c", "x", 4);
    expect([memo.get("a", "x"), memo.get("b", "x"), memo.get("c", "x")]).toEqual([undefined, undefined, 4]);
  });
});

describe("StringMemo", () => {
  it("computes each key's answer once, and at most max answers before it starts over", () => {
    const memo = new StringMemo<string>(2);
    let computed = 0;
    const upper = (s: string) => {
      computed += 1;
      return s.toUpperCase();
    };
    expect([memo.of("a", upper), memo.of("a", upper), memo.of("b", upper)]).toEqual(["A", "A", "B"]);
    expect(computed).toBe(2);
    expect(memo.of("c", upper)).toBe("C");
    expect(memo.of("a", upper)).toBe("A");
    expect(computed).toBe(4);
  });
});

describe("lowerCased", () => {
  it("is toLowerCase, answered from memory the second time", () => {
    expect(lowerCased("Priya Sharma")).toBe("priya sharma");
    expect(lowerCased("Priya Sharma")).toBe("priya sharma");
    expect(lowerCased("ÉMILE")).toBe("émile");
  });
});

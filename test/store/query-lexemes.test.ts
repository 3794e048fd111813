import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ENGLISH_STOP_WORDS, termLexeme } from "../../src/principal-index/query-lexemes.js";
import { lexicalTerms } from "../../src/recall/query-former.js";
import { STORE_KINDS } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

/**
 * The index stems the query in process; the SQL arm lets PostgreSQL do it.
 * Every term of the project's own data (the benchmark fixture, the demo
 * memories, the README) must get the lexeme PostgreSQL's english
 * configuration gives it, stop words dropped the same way; terms the
 * in-process rule does not decide are left to PostgreSQL.
 */
describe.each(STORE_KINDS)("query lexemes match PostgreSQL's english configuration ($kind)", ({ open }) => {
  const store = useStore(open);

  it("on every term of the project's data, and on every stop word", async () => {
    const texts = await Promise.all(
      ["test/fixtures/benchmark/fixture.json", "src/cli/demo-memories.ts", "README.md"].map((f) => readFile(f, "utf8")),
    );
    const terms = [...new Set([...texts.flatMap((t) => lexicalTerms(t, Number.MAX_SAFE_INTEGER)), ...ENGLISH_STOP_WORDS])];
    const rows = await store().db.query<{ term: string; lexemes: string[] }>(
      `SELECT w AS term, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', w)) AS u) AS lexemes FROM unnest($1::text[]) AS w`,
      [terms],
    );
    let decided = 0;
    const mismatches: string[] = [];
    for (const r of rows) {
      const mine = termLexeme(r.term);
      if (mine === undefined) continue;
      decided += 1;
      const theirs = r.lexemes.length === 0 ? null : r.lexemes.join(",");
      if (mine !== theirs) mismatches.push(`${r.term}: ${mine} vs ${theirs}`);
    }
    expect(mismatches).toEqual([]);
    expect(decided).toBeGreaterThan(1000);
  });

  it("leaves a term with a leading digit and letters to PostgreSQL: it may parse as a float", () => {
    expect(termLexeme("5e9d3c11")).toBeUndefined();
    expect(termLexeme("café")).toBeUndefined();
    expect(termLexeme("x9")).toBe("x9");
    expect(termLexeme("2023")).toBe("2023");
    expect(termLexeme("the")).toBeNull();
    expect(termLexeme("runs")).toBe("run");
    // Undoubling before -ed/-ing differs between Snowball releases: the store decides.
    expect(termLexeme("running")).toBeUndefined();
    expect(termLexeme("added")).toBeUndefined();
  });
});

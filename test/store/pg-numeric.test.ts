import { describe, expect, it } from "vitest";
import { bm25Idf } from "../../src/principal-index/bm25-idf.js";
import { roundLikePostgres } from "../../src/principal-index/pg-numeric.js";
import { idfSql } from "../../src/store/candidates/sql-candidates.js";
import { similarity } from "../../src/principal-index/trigram.js";
import { STORE_KINDS } from "../support/stores.js";
import { prng } from "../unit/unit-helpers.js";
import { useStore } from "./store-helpers.js";

/**
 * The index rounds scores and measures name similarity in process; the SQL
 * arms let PostgreSQL do it. Both must agree on every value, including
 * carries, tiny and large magnitudes and exact halves.
 */
describe.each(STORE_KINDS)("in-process numeric rounding, BM25 idf and trigram similarity match PostgreSQL ($kind)", ({ open }) => {
  const store = useStore(open);

  it("round(x::numeric, 12)::float8", async () => {
    const rand = prng(5);
    const values = [
      0, 1, -1, 0.5, 9.9999999999995, 1e-13, 5e-13, 4.9e-13, 1.23e-5, 1234.56789012345678, 123456789.123456789,
      ...Array.from({ length: 400 }, () => (rand() - 0.2) * 10 ** Math.floor(rand() * 12 - 6)),
      // BM25F-sized scores, and exact halves at the rounding digit (the 13th decimal) among them.
      ...Array.from({ length: 300 }, () => rand() * 40),
      ...Array.from({ length: 100 }, (_, i) => Number(`${1 + i}.${String(Math.floor(rand() * 1e12)).padStart(12, "0")}5`)),
      // Near a half but not at it (…47, …53, …499, …501 past the rounding digit): rounded from the
      // scaled float, whose error is far smaller than their distance from the half.
      ...Array.from({ length: 200 }, (_, i) =>
        Number(`${i % 40}.${String(Math.floor(rand() * 1e12)).padStart(12, "0")}${["47", "53", "499", "501"][i % 4]}`),
      ),
      12.3456789012345, 1.0000000000005, 0.0000000000015, 99.9999999999995,
    ];
    const rows = await store().db.query<{ r: number }>("SELECT round(x::numeric, 12)::float8 AS r FROM unnest($1::float8[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [values]);
    expect(values.map((v) => roundLikePostgres(v, 12))).toEqual(rows.map((r) => Number(r.r)));
  });

  // The C library's float log is off by a bit for ~0.1% of these arguments, V8's Math.log for ~8%:
  // either would move a score on a 12-decimal rounding edge now and then.
  it("BM25 idf: every df of every n up to 300, and large principals", async () => {
    const rand = prng(7);
    const pairs: [number, number][] = [];
    for (let n = 1; n <= 300; n++) for (let df = 1; df <= n; df++) pairs.push([n, df]);
    for (let i = 0; i < 5000; i++) {
      const n = 1 + Math.floor(rand() * 2_000_000);
      pairs.push([n, 1 + Math.floor(rand() * n)]);
    }
    const rows = await store().db.query<{ idf: number }>(
      `SELECT ${idfSql("n", "df")} AS idf FROM unnest($1::float8[], $2::bigint[]) WITH ORDINALITY AS u(n, df, i) ORDER BY i`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
    const differing = pairs.filter(([n, df], i) => bm25Idf(n, df) !== Number(rows[i]!.idf));
    expect(rows).toHaveLength(pairs.length);
    expect(differing).toEqual([]);
  });

  it("pg_trgm similarity", async () => {
    const pairs: [string, string][] = [
      ["melanie", "melanei"], ["priya", "priyaa"], ["acme corp", "acmee"], ["andy", "andyy"], ["veetbot", "veetbott"],
      ["a", "ab"], ["caroline's sister", "carolin"], ["x", "y"], ["", "abc"], ["new york", "newyork"],
    ];
    const rows = await store().db.query<{ s: number }>(
      "SELECT similarity(a, b)::float8 AS s FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(a, b, i) ORDER BY i",
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
    expect(pairs.map(([a, b]) => similarity(a, b))).toEqual(rows.map((r) => Number(r.s)));
  });
});

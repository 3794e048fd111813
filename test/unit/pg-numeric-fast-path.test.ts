import { describe, expect, it } from "vitest";
import { roundDecimalText, roundLikePostgres } from "../../src/principal-index/pg-numeric.js";
import { prng } from "./unit-helpers.js";

/**
 * roundLikePostgres answers most values from the scaled float and leaves the
 * ones near a half at the rounding digit to the digit-by-digit rounding. The
 * two must agree everywhere (PostgreSQL itself is compared in
 * test/store/pg-numeric.test.ts).
 */
describe("round(x::numeric, 12)::float8, fast path", () => {
  it("agrees with the digit-by-digit rounding on random magnitudes, signs and near-halves", () => {
    const rand = prng(11);
    const values: number[] = [];
    for (let i = 0; i < 50_000; i++) values.push((rand() - 0.3) * 10 ** (rand() * 20 - 14));
    for (let i = 0; i < 20_000; i++) values.push(rand() * 60);
    // Values whose 15 significant digits end in 5 at the 13th decimal, and one ulp either side.
    for (let i = 0; i < 20_000; i++) {
      const v = Number(`${Math.floor(rand() * 99)}.${String(Math.floor(rand() * 1e12)).padStart(12, "0")}5`);
      values.push(v, v + Number.EPSILON * v, v - Number.EPSILON * v, -v);
    }
    const different = values.filter((v) => !Object.is(roundLikePostgres(v, 12), roundDecimalText(v, 12)));
    expect(different).toEqual([]);
  });

  it("agrees at other scales", () => {
    const rand = prng(12);
    for (const scale of [0, 2, 6, 9]) {
      const values = Array.from({ length: 5_000 }, () => (rand() - 0.5) * 10 ** (rand() * 10 - 3));
      expect(values.filter((v) => !Object.is(roundLikePostgres(v, scale), roundDecimalText(v, scale)))).toEqual([]);
    }
  });
});

/**
 * BM25's idf, ln(1 + (n − df + 0.5) / (df + 0.5)), exactly as the SQL arm
 * computes it (store/candidates/sql-candidates.ts): the natural log of the exact
 * rational (2n + 2) / (2df + 1), rounded once to the nearest float8.
 *
 * Why not Math.log on the float argument: the SQL arm used to take the float8
 * argument's ln from the C library, and V8's Math.log differed from glibc's
 * log in the last bit for about 8% of idf arguments (6,164 of 80,200, n ≤ 400);
 * glibc's own log is not correctly rounded either (75 of them). A last-bit
 * difference moved a 12-decimal score on a rounding edge now and then, so
 * the two paths disagreed. The SQL now computes the log in numeric at 40
 * decimals and reads it back as float8 (correctly rounded), which no library
 * decides; this computes the same value in double-double arithmetic (about
 * 32 significant digits), so the two agree unless the exact log lies within
 * ~1e-32 of a float8 rounding midpoint.
 */
export function bm25Idf(n: number, df: number): number {
  // About 1 µs to compute; a principal's queries ask for the same few (n, df) until it changes.
  if (n >= 2 ** 24) return lnOfRatio(2 * n + 2, 2 * df + 1);
  const key = n * 2 ** 24 + df;
  let idf = remembered.get(key);
  if (idf === undefined) {
    if (remembered.size >= REMEMBERED_MAX) remembered.clear();
    idf = lnOfRatio(2 * n + 2, 2 * df + 1);
    remembered.set(key, idf);
  }
  return idf;
}

/** By n·2^24 + df, distinct for df ≤ n < 2^24. */
const remembered = new Map<number, number>();
const REMEMBERED_MAX = 65_536;

/** ln(p / q), correctly rounded, for positive integers below 2^52. */
function lnOfRatio(p: number, q: number): number {
  // p / q as a double-double: the quotient and the quotient of its exact remainder.
  const xh = p / q;
  twoProduct(xh, q);
  const xl = (p - hi - lo) / q;
  return lnDoubleDouble(xh, xl);
}

// Results of the double-double steps, in two module slots (no allocation per step).
let hi = 0;
let lo = 0;

const SPLITTER = 134217729; // 2^27 + 1: Dekker's split of a double into two 26-bit halves
const LN2_HI = 0.6931471805599453;
const LN2_LO = 2.3190468138462996e-17;
/** 1 / (2j + 1) for j = 0…20 as double-doubles: the atanh series' coefficients. */
const SERIES_TERMS = 21;
const COEFF_HI = new Float64Array(SERIES_TERMS);
const COEFF_LO = new Float64Array(SERIES_TERMS);
for (let j = 0; j < SERIES_TERMS; j++) {
  divide(1, 0, 2 * j + 1, 0);
  COEFF_HI[j] = hi;
  COEFF_LO[j] = lo;
}
const bits = new DataView(new ArrayBuffer(8));

/**
 * ln(xh + xl): x = 2^k · m with m in [√½, √2], ln m = 2·atanh(s) with
 * s = (m − 1)/(m + 1), |s| ≤ 0.172, summed to s^41 (below 2^-104).
 */
function lnDoubleDouble(xh: number, xl: number): number {
  bits.setFloat64(0, xh);
  const high = bits.getUint32(0);
  let k = ((high >>> 20) & 0x7ff) - 1023;
  bits.setUint32(0, (high & 0x800fffff) | (1023 << 20));
  let m = bits.getFloat64(0);
  if (m > Math.SQRT2) {
    m /= 2;
    k += 1;
  }
  const ml = xl * (m / xh); // the low part, scaled by the same power of two
  add(m, ml, -1, 0);
  const nh = hi;
  const nl = lo;
  add(m, ml, 1, 0);
  divide(nh, nl, hi, lo);
  const sh = hi;
  const sl = lo;
  multiply(sh, sl, sh, sl);
  const s2h = hi;
  const s2l = lo;
  let th = COEFF_HI[SERIES_TERMS - 1]!;
  let tl = COEFF_LO[SERIES_TERMS - 1]!;
  for (let j = SERIES_TERMS - 2; j >= 0; j--) {
    multiply(th, tl, s2h, s2l);
    add(hi, lo, COEFF_HI[j]!, COEFF_LO[j]!);
    th = hi;
    tl = lo;
  }
  multiply(th, tl, sh, sl);
  const rh = 2 * hi;
  const rl = 2 * lo;
  multiply(LN2_HI, LN2_LO, k, 0);
  add(hi, lo, rh, rl);
  return hi + lo;
}

/** a · b exactly, as hi + lo (Dekker). */
function twoProduct(a: number, b: number): void {
  const p = a * b;
  let t = SPLITTER * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLITTER * b;
  const bh = t - (t - b);
  const bl = b - bh;
  hi = p;
  lo = ah * bh - p + ah * bl + al * bh + al * bl;
}

function add(ah: number, al: number, bh: number, bl: number): void {
  const s = ah + bh;
  const v = s - ah;
  const e = ah - (s - v) + (bh - v) + al + bl;
  hi = s + e;
  lo = e - (hi - s);
}

function multiply(ah: number, al: number, bh: number, bl: number): void {
  twoProduct(ah, bh);
  const p = hi;
  const e = lo + ah * bl + al * bh;
  hi = p + e;
  lo = e - (hi - p);
}

function divide(ah: number, al: number, bh: number, bl: number): void {
  // Long division in three float quotients, each taken from the exact remainder.
  const q1 = ah / bh;
  multiply(bh, bl, q1, 0);
  add(ah, al, -hi, -lo);
  const q2 = hi / bh;
  const rh = hi;
  const rl = lo;
  multiply(bh, bl, q2, 0);
  add(rh, rl, -hi, -lo);
  const q3 = hi / bh;
  add(q1, 0, q2, 0);
  add(hi, lo, q3, 0);
}

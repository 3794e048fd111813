/**
 * `round(x::numeric, scale)::float8` as PostgreSQL computes it, so scores
 * computed in process round exactly as the SQL arm's do: the float8 is first
 * converted to numeric through its 15 significant digits (DBL_DIG), then
 * rounded half away from zero, then read back as the nearest float8.
 */
export function roundLikePostgres(x: number, scale: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  // Most scores are not near a half at the rounding digit: rounding the scaled value then answers
  // exactly, at a fraction of the cost of rounding the decimal text. The scaled value is two
  // correctly rounded operations from the exact one (reading the digits, then one product), so
  // its error is below scaled·2^-52; a fraction further than four times that from .5 rounds as the
  // exact value would. n / 10^scale is then the float nearest n·10^-scale, which is what the text
  // would parse to. (A margin of 0.2 sent 43% of BM25-sized scores to the text, this one about 8%.)
  const scaled = Number(Math.abs(x).toPrecision(15)) * 10 ** scale;
  if (scale <= 22 && scaled >= 1 && scaled < 2 ** 48 && Math.abs(scaled - Math.floor(scaled) - 0.5) > scaled * 2 ** -50) {
    const n = Math.round(scaled);
    return (x < 0 ? -n : n) / 10 ** scale;
  }
  return roundDecimalText(x, scale);
}

/** roundLikePostgres on the 15-significant-digit text: exact for every value. */
export function roundDecimalText(x: number, scale: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const negative = x < 0;
  const [mantissa, exponent] = Math.abs(x).toPrecision(15).split("e") as [string, string | undefined];
  const [whole, fraction = ""] = mantissa.split(".") as [string, string | undefined];
  const digits = whole + fraction;
  // The decimal point sits after `point` of `digits` (it may be outside them).
  const point = whole.length + Number(exponent ?? 0);
  const keep = point + scale;
  // Nothing to round off: the value is its 15 significant digits.
  if (keep >= digits.length) {
    const value = Number(`${digits}e${point - digits.length}`);
    return negative ? -value : value;
  }
  if (keep <= 0) {
    const rounded = keep === 0 && Number(digits[0]) >= 5 ? 10 ** -scale : 0;
    return negative ? -rounded : rounded;
  }
  // The digits as one integer (15 digits: exact), the `dropped` last ones rounded off half away
  // from zero by integer remainder; what is kept counts units of 10^-scale, and dividing by
  // 10^scale (exact up to 10^22) rounds to the nearest float8 as reading the decimal text would.
  const dropped = digits.length - keep;
  if (scale > 22) return roundDigitText(digits, keep, point, negative);
  const whole15 = Number(digits);
  const unit = 10 ** dropped;
  const rest = whole15 % unit;
  const kept = (whole15 - rest) / unit + (2 * rest >= unit ? 1 : 0);
  const value = kept / 10 ** scale;
  return negative ? -value : value;
}

/** The rounding digit by digit on the text, for scales whose power of ten is not an exact float8. */
function roundDigitText(digits: string, keep: number, point: number, negative: boolean): number {
  const kept = digits.slice(0, keep).split("").map(Number);
  if (Number(digits[keep]) >= 5) {
    let i = kept.length - 1;
    while (i >= 0 && kept[i] === 9) kept[i--] = 0;
    if (i >= 0) kept[i]! += 1;
    else kept.unshift(1);
  }
  const shift = kept.length - keep; // 1 when rounding carried into a new leading digit
  const value = Number(`${kept.join("")}e${point + shift - kept.length}`);
  return negative ? -value : value;
}

/**
 * `items.sort(order).slice(0, k)` without sorting them all: thousands of
 * beliefs can match a common word or a durable type, and only the first k go on. `order`
 * is total (ids break ties), so the result is the same.
 */
export function firstK<T>(items: readonly T[], k: number, order: (a: T, b: T) => number): T[] {
  const best: T[] = [];
  if (k <= 0) return best;
  for (const item of items) {
    if (best.length === k && order(item, best[k - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(best[mid]!, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, item);
    if (best.length > k) best.pop();
  }
  return best;
}

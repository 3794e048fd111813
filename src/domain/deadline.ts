/** The earlier of two deadlines (epoch ms), either possibly absent: absent is no deadline. */
export function earlier(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

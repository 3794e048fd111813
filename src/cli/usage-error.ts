/**
 * Something the user typed is wrong (an unknown option, a missing argument):
 * printed as one line with the command's usage, exit 2. node:util's parseArgs
 * errors (code ERR_PARSE_ARGS_*) are treated the same way.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export function isUsageError(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}

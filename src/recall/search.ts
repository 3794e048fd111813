import type { ScopeSource } from "../domain/model.js";

/**
 * Deliberate lookup: the memory.search tool's rules that are not the shared
 * pipeline. Search runs the same hard filter, safety pass and budget as
 * automatic recall (pipeline.ts, kind "search"); what differs is decided here.
 */

/** The tool and version the Search RPC implements (recorded in every search trace). */
export const SEARCH_TOOL_ID = "memory.search@2.1.0";

/** Words that name the user or owner in a keyword query ("user car", "owner's laptop"). */
const OWNER_WORDS: ReadonlySet<string> = new Set(["user", "users", "owner", "owners"]);

/**
 * True when a search names the user or owner, which turns on the bounded
 * ownership lookup ("User has a 2026 Aster S8.", "The user drives …"): the
 * words "user" or "owner", or the principal's own id when it is a plain name
 * ("andy"). A possessive "my" is the automatic query former's business, not
 * a keyword search's.
 */
export function namesTheOwner(text: string, principalId: string): boolean {
  const words = text.toLowerCase().replace(/['’]s\b/g, "").match(/[\p{L}\p{N}]+/gu) ?? [];
  const name = principalId.toLowerCase();
  const nameIsWord = /^\p{L}{2,}$/u.test(name);
  return words.some((w) => OWNER_WORDS.has(w) || (nameIsWord && w === name));
}

export interface ScopeResolution {
  scope: string;
  source: ScopeSource;
}

/**
 * Where a search runs from. One rule, used for every search, so the scope a
 * runtime prepares a call with is the scope it executes with:
 *
 * 1. `scope` in the request: an intentional (possibly cross-project) lookup;
 * 2. else the call's `x-session-scope` metadata (the authenticated session's project);
 * 3. else the current_scope of the session's first snapshot recall (when the
 *    request names its session_id and that session opened with a snapshot);
 * 4. else none: no project is current, every project belief counts as carried.
 *
 * `snapshotScope` is looked up only when steps 1 and 2 give nothing, so it is
 * passed as a function.
 */
export async function resolveSearchScope(input: {
  requested: string;
  sessionHeader: string | null;
  snapshotScope: () => Promise<string | null>;
}): Promise<ScopeResolution> {
  if (input.requested !== "") return { scope: input.requested, source: "request" };
  if (input.sessionHeader !== null && input.sessionHeader !== "") return { scope: input.sessionHeader, source: "session_header" };
  const fromSnapshot = await input.snapshotScope();
  if (fromSnapshot !== null && fromSnapshot !== "") return { scope: fromSnapshot, source: "session_snapshot" };
  return { scope: "", source: "none" };
}

import type { Principal, RecallTrace } from "../domain/model.js";
import { sha256Hex } from "../recall/pipeline.js";
import type { MemoryStore } from "../store/memory-store.js";
import { rerender } from "../trace/rerender.js";

/**
 * GetRenderedBlock: the block of a recall, rendered again from its trace and
 * checked against the hash the trace recorded in the render pass. The block
 * itself is never stored; when a belief changed or was erased since, the
 * bytes differ and the answer says so instead of passing them off as shown.
 */
export interface RenderedBlock {
  rendered: string;
  renderedSha256: string;
  traceSha256: string;
  matchesTrace: boolean;
  reason: string;
}

export async function renderedBlock(store: MemoryStore, principal: Principal, trace: RecallTrace): Promise<RenderedBlock> {
  const unavailable = (reason: string): RenderedBlock => ({
    rendered: "",
    renderedSha256: "",
    traceSha256: trace.renderedSha256,
    matchesTrace: false,
    reason,
  });
  if (trace.episodeQuery) return unavailable("an episode page: its block is rendered from episodes, not beliefs");
  const beliefs = await store.beliefsById(principal, trace.returned);
  let rendered: string;
  try {
    rendered = await rerender(trace, beliefs);
  } catch (error) {
    return unavailable(`cannot be rendered again: ${(error as Error).message}`);
  }
  const renderedSha256 = sha256Hex(rendered);
  const matchesTrace = renderedSha256 === trace.renderedSha256;
  return {
    rendered,
    renderedSha256,
    traceSha256: trace.renderedSha256,
    matchesTrace,
    reason: matchesTrace ? "" : "a belief it showed has changed since: these bytes are not the ones the model read",
  };
}

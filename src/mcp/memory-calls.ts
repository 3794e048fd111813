import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, type Client } from "@connectrpc/connect";
import type {
  MemoryService,
  RecallEpisodesRequestSchema,
  RecallEpisodesResponse,
  RecallRequestSchema,
  SearchRequestSchema,
  SearchResponse,
} from "../gen/memory/v1/memory_service_pb.js";
import type { RecallResult } from "../gen/memory/v1/types_pb.js";
import { RecallError } from "../sdk/errors.js";
import { withDeadline, type RetryPolicy } from "../sdk/retry.js";

/**
 * The three RPCs the MCP tools call, on a connect-es client of
 * MemoryService: over gRPC to a running sidecar (`recall mcp`), or in
 * process through the sidecar's own router (`/mcp`). Either way the call
 * goes through the sidecar's interceptors and handlers, so it is validated,
 * isolated, logged, counted, traced and recorded as a gRPC call is. Every
 * call has a deadline and is retried on UNAVAILABLE only (all three are reads).
 */
export interface MemoryCalls {
  search(request: MessageInitShape<typeof SearchRequestSchema>): Promise<SearchResponse>;
  recallEpisodes(request: MessageInitShape<typeof RecallEpisodesRequestSchema>): Promise<RecallEpisodesResponse>;
  /** A Recall stream, consumed to its result. */
  recall(request: MessageInitShape<typeof RecallRequestSchema>): Promise<RecallResult>;
}

export interface MemoryCallOptions {
  /** Each call's deadline, retries included. */
  deadlineMs: number;
  retry: RetryPolicy;
  /** Sent with every call (the identity headers, when the client does not add them itself); a function is asked each call. */
  headers?: Record<string, string> | (() => Promise<Record<string, string>>);
}

export function memoryCalls(client: Client<typeof MemoryService>, options: MemoryCallOptions): MemoryCalls {
  const fixed = options.headers;
  const headersNow = typeof fixed === "function" ? fixed : async () => fixed ?? {};
  const call = <T>(method: string, send: (timeoutMs: number) => Promise<T>, canRetry?: () => boolean) =>
    withDeadline(method, options.deadlineMs, options.retry, send, canRetry);
  return {
    search: (request) => call("MemoryService.Search", async (timeoutMs) => client.search(request, { timeoutMs, headers: await headersNow() })),
    recallEpisodes: (request) => call("MemoryService.RecallEpisodes", async (timeoutMs) => client.recallEpisodes(request, { timeoutMs, headers: await headersNow() })),
    recall: (request) => {
      let started = false;
      return call(
        "MemoryService.Recall",
        async (timeoutMs) => {
          let result: RecallResult | undefined;
          // Read to the end (not left at the result): a stream left open would end as CANCELLED.
          for await (const event of client.recall(request, { timeoutMs, headers: await headersNow() })) {
            started = true;
            if (event.event.case === "result") result = event.event.value;
          }
          if (result) return result;
          throw new RecallError(Code.Internal, "MemoryService.Recall", "the stream ended without a result");
        },
        // Retried only before the first event: after it the recall has run.
        () => !started,
      );
    },
  };
}

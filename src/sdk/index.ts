/**
 * recall's TypeScript client SDK (the package's main entry): the agent
 * runtime's call flow over the generated connect-es client. See
 * docs/typescript.md.
 */
export {
  createRecallClient,
  type CallOptions,
  type OpenSessionOptions,
  type RecallClient,
  type RecallClientOptions,
  type RejectionKindName,
  type RejectOptions,
  type Session,
  type SessionRef,
  type TurnOptions,
  type TurnRecall,
} from "./client.js";
export { Code, RecallError } from "./errors.js";
export { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
export type { ArmResult, RecallEpisodesResponse, SearchResponse } from "../gen/memory/v1/memory_service_pb.js";
export type { RecallResult, RecalledBelief } from "../gen/memory/v1/types_pb.js";

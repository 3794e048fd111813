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
export {
  BELIEF_DEFAULTS,
  citedIds,
  type Appended,
  type RememberOptions,
  type WriteCallOptions,
  type WriteHelpers,
  type Written,
  type WrittenMany,
} from "./writes.js";
export {
  Authority,
  BeliefStatus,
  Portability,
  ScopeLevel,
  Sensitivity,
  type AuthorityName,
  type BeliefInput,
  type BeliefJson,
  type BeliefStatusName,
  type EpisodeInput,
  type EpisodeJson,
  type PortabilityName,
  type ScopeLevelName,
  type SensitivityName,
  type TimeInput,
} from "./write-input.js";
export { RejectionKind } from "../gen/memory/v1/write_service_pb.js";
export { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
export type { ArmResult, RecallEpisodesResponse, SearchResponse } from "../gen/memory/v1/memory_service_pb.js";
export type { RecallResult, RecalledBelief } from "../gen/memory/v1/types_pb.js";

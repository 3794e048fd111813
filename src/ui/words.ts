import { Authority, BeliefStatus, ConfidenceBand, Moment, Sensitivity } from "../gen/memory/v1/types_pb.js";
import { RejectionKind } from "../gen/memory/v1/write_service_pb.js";
import { CandidateOutcome } from "../gen/memory/v1/inspect_service_pb.js";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * Plain words for the trust fields, so a person reads "sure, you said so"
 * rather than CONFIDENCE_BAND_HIGH / AUTHORITY_USER (the raw values stay one
 * click away on every belief). Pure functions.
 */

export const AUTHORITY_WORDS: Record<Authority, string> = {
  [Authority.UNSPECIFIED]: "source unknown",
  [Authority.USER]: "you said so",
  [Authority.AFFIRMED]: "the agent concluded it and you confirmed",
  [Authority.INFERRED]: "the agent inferred it",
};

export const BAND_WORDS: Record<ConfidenceBand, string> = {
  [ConfidenceBand.UNSPECIFIED]: "Unrated",
  [ConfidenceBand.HIGH]: "Sure",
  [ConfidenceBand.MEDIUM]: "Fairly sure",
  [ConfidenceBand.LOW]: "Unsure",
};

export const STATUS_WORDS: Record<BeliefStatus, string> = {
  [BeliefStatus.UNSPECIFIED]: "unknown",
  [BeliefStatus.ACTIVE]: "current",
  [BeliefStatus.PROVISIONAL]: "tentative",
  [BeliefStatus.SUPERSEDED]: "replaced",
  [BeliefStatus.EXPIRED]: "no longer holds",
};

export const SENSITIVITY_WORDS: Record<Sensitivity, string> = {
  [Sensitivity.UNSPECIFIED]: "default",
  [Sensitivity.PUBLIC]: "public",
  [Sensitivity.PERSONAL]: "personal",
  [Sensitivity.CONFIDENTIAL]: "confidential",
  [Sensitivity.RESTRICTED]: "restricted",
};

export const MOMENT_WORDS: Record<Moment, string> = {
  [Moment.UNSPECIFIED]: "recall",
  [Moment.SNAPSHOT]: "session-open snapshot",
  [Moment.IN_TURN]: "in-turn recall",
  [Moment.CHILD_RUN]: "child run",
};

export const REJECTION_WORDS: Record<RejectionKind, string> = {
  [RejectionKind.UNSPECIFIED]: "Flag it: something is off (review it, weigh it less)",
  [RejectionKind.NOT_TRUE]: "Not true: stop believing it",
  [RejectionKind.CHANGED]: "Was true, has changed: replace it with a correction",
  [RejectionKind.NOT_HERE]: "True elsewhere, not in this project",
};

/** Why the safety pass keeps a statement from the agent (its text never reaches the page either). */
export const WITHHELD_WORDS: Record<string, string> = {
  injection: "it reads like an instruction to the agent",
  secret: "it contains a credential",
  private: "it is private reasoning",
};

/** What became of a candidate of a recall, as its trace recorded it: one exact reason each. */
export const OUTCOME_WORDS: Record<CandidateOutcome, string> = {
  [CandidateOutcome.UNSPECIFIED]: "not shown (this trace kept no reason: older, or past the operator window)",
  [CandidateOutcome.SHOWN]: "shown",
  [CandidateOutcome.SHOWN_WITH_CONFLICT_PARTNER]: "shown with its conflict partner (below the relevance floor on its own)",
  [CandidateOutcome.WITHHELD_BY_SAFETY]: "withheld by the safety pass (a placeholder was shown)",
  [CandidateOutcome.BELOW_FLOOR]: "not shown: its score is below the relevance floor",
  [CandidateOutcome.BELOW_RELATIVE_FLOOR]: "not shown: held back by the relative floor (a weak match beside this recall's best)",
  [CandidateOutcome.OVER_BUDGET]: "not shown: the token budget was full",
  [CandidateOutcome.OVER_ITEM_CAP]: "not shown: the item cap was reached",
  [CandidateOutcome.OVER_SUBJECT_CAP]: "not shown: its subject had reached the per-subject cap",
  [CandidateOutcome.OVER_SNAPSHOT_SHARE]: "not shown: the snapshot's share for its kind was full",
  [CandidateOutcome.COLLAPSED_SUPERSEDED]: "collapsed: an older revision of a fact whose newer one was considered",
  [CandidateOutcome.COLLAPSED_RESTATEMENT]: "collapsed: it restates a belief ranked higher",
  [CandidateOutcome.OVER_BUDGET_OR_ITEM_CAP]: "not shown: over the token budget or the item cap",
};

/** "Sure — you said so". */
export function trustLabel(band: ConfidenceBand, authority: Authority): string {
  return `${BAND_WORDS[band]} — ${AUTHORITY_WORDS[authority]}`;
}

export function date(ts: Timestamp | undefined): string {
  if (!ts) return "";
  return new Date(Number(ts.seconds) * 1000).toISOString().slice(0, 10);
}

export function dateTime(ts: Timestamp | undefined): string {
  if (!ts) return "";
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/** "since 2026-06-01", "2026-01-01 to 2026-06-01". */
export function validity(from: Timestamp | undefined, to: Timestamp | undefined): string {
  if (to) return `held ${date(from)} to ${date(to)}`;
  return `holds since ${date(from)}`;
}

/** The first eight hex digits, as the rendered block cites a belief: [m:8f21a0c3]. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

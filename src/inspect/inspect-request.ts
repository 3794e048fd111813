import type { SensitivityName } from "../config/config.js";
import { InvalidArgumentError } from "../domain/errors.js";
import type * as domain from "../domain/model.js";
import type {
  GetBeliefRequest,
  ListBeliefsRequest,
  ListSessionsRequest,
  ListTurnsRequest,
} from "../gen/memory/v1/inspect_service_pb.js";
import { AUTHORITY, SENSITIVITY_LEVEL, STATUS } from "../server/wire/convert.js";
import { enumValue, MAX_CONTEXT_ID, surface, time, uuid } from "../server/wire/validate.js";
import type { BeliefFilter } from "../store/inspect-store.js";

/**
 * Validation of the inspection API's requests: each check names the field,
 * as every request of the sidecar does (server/wire/validate.ts, whose helpers
 * these reuse).
 */

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;
const MAX_FILTER_VALUES = 50;
const MAX_NAME = 500;

export function pageSize(value: number): number {
  if (value < 0) throw new InvalidArgumentError("page_size", "must not be negative");
  if (value > MAX_PAGE) throw new InvalidArgumentError("page_size", `must be at most ${MAX_PAGE}`);
  return value === 0 ? DEFAULT_PAGE : value;
}

function values<P, D>(list: readonly P[], field: string, each: (value: P, at: string) => D): D[] {
  if (list.length > MAX_FILTER_VALUES) throw new InvalidArgumentError(field, `must have at most ${MAX_FILTER_VALUES} entries`);
  return [...new Set(list.map((v, i) => each(v, `${field}[${i}]`)))];
}

function name(value: string, at: string): string {
  if (value.trim() === "") throw new InvalidArgumentError(at, "must not be empty");
  if (value.length > MAX_NAME) throw new InvalidArgumentError(at, `must be at most ${MAX_NAME} characters`);
  return value;
}

/** The viewing surface's ceiling: the stricter bound of everything an inspection returns. */
export function viewingCeiling(req: { viewingSurface?: ListBeliefsRequest["viewingSurface"] }, defaultCeiling: SensitivityName): domain.SensitivityLevel {
  return surface(req.viewingSurface, defaultCeiling, "viewing_surface").sensitivityCeiling;
}

export function listBeliefsRequest(req: ListBeliefsRequest, defaultCeiling: SensitivityName): { filter: BeliefFilter; pageSize: number } {
  return {
    filter: {
      ceiling: viewingCeiling(req, defaultCeiling),
      statuses: values(req.statuses, "statuses", (v, at) => enumValue(STATUS, v, at)),
      beliefTypes: values(req.beliefTypes, "belief_types", name),
      originScopes: values(req.originScopes, "origin_scopes", name),
      sensitivities: values(req.sensitivities, "sensitivities", (v, at) => enumValue(SENSITIVITY_LEVEL, v, at)),
      authorities: values(req.authorities, "authorities", (v, at) => enumValue(AUTHORITY, v, at)),
      subject: req.subject === "" ? null : name(req.subject, "subject"),
      asOf: time(req.asOf, "as_of"),
      knownAt: time(req.knownAt, "known_at"),
    },
    pageSize: pageSize(req.pageSize),
  };
}

export function getBeliefRequest(req: GetBeliefRequest, defaultCeiling: SensitivityName): { beliefId: string; ceiling: domain.SensitivityLevel } {
  return { beliefId: uuid(req.beliefId, "belief_id"), ceiling: viewingCeiling(req, defaultCeiling) };
}

export function listSessionsRequest(req: ListSessionsRequest): { pageSize: number } {
  return { pageSize: pageSize(req.pageSize) };
}

export function listTurnsRequest(req: ListTurnsRequest): { sessionId: string; pageSize: number } {
  if (req.sessionId.trim() === "") throw new InvalidArgumentError("session_id", "is required");
  return { sessionId: req.sessionId.slice(0, MAX_CONTEXT_ID), pageSize: pageSize(req.pageSize) };
}


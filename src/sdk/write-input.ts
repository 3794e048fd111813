import { create, ScalarType, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  Authority,
  BeliefSchema,
  BeliefStatus,
  EpisodeSchema,
  Portability,
  ScopeLevel,
  Sensitivity,
  type Belief,
  type Episode,
} from "../gen/memory/v1/types_pb.js";
import { RecallError } from "./errors.js";

/**
 * What the write helpers accept, turned into the protobuf messages the
 * sidecar takes. A belief or an episode may come in the shape a TypeScript
 * caller writes (camelCase, `status: "active"`) or in the snake_case
 * protobuf-JSON shape of an import file or a fixture (`belief_id`,
 * `status: "BELIEF_STATUS_ACTIVE"`); enum values may also be the generated
 * enums' numbers. What cannot be encoded (an unknown field, a word that is no
 * enum value, a string where a number goes) is refused here, every problem
 * at once and by the field's snake_case path, as INVALID_ARGUMENT: never the
 * encoder's INTERNAL "invalid int32: NaN". The sidecar checks the rest the
 * same way (required fields, ranges).
 */

export { Authority, BeliefStatus, Portability, ScopeLevel, Sensitivity };

export type BeliefStatusName = "active" | "provisional" | "superseded" | "expired";
export type AuthorityName = "user" | "affirmed" | "inferred";
export type PortabilityName = "portable" | "contextual" | "local";
export type ScopeLevelName = "project" | "user" | "global";
export type SensitivityName = "public" | "personal" | "confidential" | "restricted";

/** A friendly name ("active"), the protobuf name ("BELIEF_STATUS_ACTIVE") or the generated enum's value. */
type EnumInput<Name extends string, Prefix extends string, E> = Name | `${Prefix}_${Uppercase<Name>}` | E;

/** A point in time: a Date, an RFC 3339 string ("2026-07-24T09:00:00Z"), or a protobuf Timestamp. */
export type TimeInput = Date | string | Pick<Timestamp, "seconds" | "nanos">;

/** A belief as the helpers take it. Only `subject` and `statement` have no default (see docs/writing-memories.md). */
export interface BeliefInput {
  /** A UUID; a random UUID v4 when omitted. */
  beliefId?: string;
  subject: string;
  statement: string;
  beliefType?: string;
  predicateKey?: string;
  status?: EnumInput<BeliefStatusName, "BELIEF_STATUS", BeliefStatus>;
  confidence?: number;
  authority?: EnumInput<AuthorityName, "AUTHORITY", Authority>;
  originScope?: string;
  scopeLevel?: EnumInput<ScopeLevelName, "SCOPE_LEVEL", ScopeLevel>;
  portability?: EnumInput<PortabilityName, "PORTABILITY", Portability>;
  sensitivity?: EnumInput<SensitivityName, "SENSITIVITY", Sensitivity>;
  validFrom?: TimeInput;
  validTo?: TimeInput;
  recordedAt?: TimeInput;
  retractedAt?: TimeInput;
  supersedes?: readonly string[];
  conflictsWith?: readonly string[];
  evidenceCount?: number;
  lastEvidenceAt?: TimeInput;
  expiresHint?: TimeInput;
  flaggedForReview?: boolean;
  sourceEpisodeIds?: readonly string[];
}

/** An episode as the helpers take it: `sessionId` and `content` have no default. */
export interface EpisodeInput {
  /** A UUID; a random UUID v4 when omitted. */
  episodeId?: string;
  sessionId: string;
  /** Defaults to now. */
  occurredAt?: TimeInput;
  /** Defaults to the episode's position in its batch, so a batch keeps its order. */
  sequence?: number | bigint;
  actor?: string;
  /** Defaults to "message". */
  kind?: string;
  content: string;
  /** Defaults to the client's scope. */
  project?: string;
  archival?: boolean;
  sensitivity?: EnumInput<SensitivityName, "SENSITIVITY", Sensitivity>;
}

/** "beliefId" → "belief_id", at the type level. */
type SnakeCase<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}` : S;
type SnakeCased<T> = { [K in keyof T as SnakeCase<K & string>]: T[K] };

/** Enum fields as parsed JSON holds them: any string or number, checked when the call is made. */
type LooseEnums<T, K extends keyof T> = Omit<T, K> & { [F in K]?: string | number };

/** The same belief in the snake_case shape of an import line's "belief" (protobuf JSON). */
export type BeliefJson = LooseEnums<SnakeCased<BeliefInput>, "status" | "authority" | "scope_level" | "portability" | "sensitivity">;
export type EpisodeJson = LooseEnums<SnakeCased<EpisodeInput>, "sensitivity">;

/** The problems found so far, as "field.path: problem". */
export type Problems = string[];

/** Throws one INVALID_ARGUMENT listing every problem, as the sidecar words its own. */
export function throwIfAny(problems: Problems, method: string): void {
  if (problems.length > 0) throw new RecallError(Code.InvalidArgument, method, problems.join("; "), 0);
}

export function toBelief(input: BeliefInput | BeliefJson, at: string, problems: Problems): Belief {
  return toMessage(BeliefSchema, input, at, problems);
}

export function toEpisode(input: EpisodeInput | EpisodeJson, at: string, problems: Problems): Episode {
  return toMessage(EpisodeSchema, input, at, problems);
}

/** `input` as a message of `schema`, field by field; a field that cannot be encoded adds a problem and is left unset. */
function toMessage<S extends DescMessage>(schema: S, input: unknown, at: string, problems: Problems): MessageShape<S> {
  const init: Record<string, unknown> = {};
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    problems.push(`${at}: must be an object`);
    return create(schema);
  }
  for (const [key, value] of Object.entries(input)) {
    if (key.startsWith("$")) continue; // a message's own $typeName and $unknown
    const field = fieldNamed(schema, key);
    if (!field) {
      problems.push(`${at}.${key}: is not a field of ${schema.name}`);
      continue;
    }
    if (value === undefined || value === null) continue;
    const converted = fieldValue(field, value, `${at}.${field.name}`, problems);
    if (converted !== undefined) init[field.localName] = converted;
  }
  return create(schema, init as never);
}

function fieldNamed(schema: DescMessage, key: string): DescField | undefined {
  return schema.fields.find((f) => f.localName === key || f.name === key || f.jsonName === key);
}

function fieldValue(field: DescField, value: unknown, path: string, problems: Problems): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return scalar(field.scalar, value, path, problems);
    case "enum":
      return enumNumber(field.enum.values, value, path, problems);
    case "message":
      return field.message.typeName === "google.protobuf.Timestamp" ? timestamp(value, path, problems) : value;
    case "list": {
      if (!Array.isArray(value)) return void problems.push(`${path}: must be a list`);
      if (field.listKind !== "scalar") return value;
      const out = value.map((v, i) => scalar(field.scalar, v, `${path}[${i}]`, problems));
      return out.includes(undefined) ? undefined : out;
    }
    default:
      return value;
  }
}

function scalar(type: ScalarType, value: unknown, path: string, problems: Problems): unknown {
  switch (type) {
    case ScalarType.STRING:
      return typeof value === "string" ? value : void problems.push(`${path}: must be a string`);
    case ScalarType.BOOL:
      return typeof value === "boolean" ? value : void problems.push(`${path}: must be true or false`);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return typeof value === "number" && Number.isFinite(value) ? value : void problems.push(`${path}: must be a number`);
    case ScalarType.INT32:
      return Number.isInteger(value) && Math.abs(value as number) <= 2 ** 31 - 1
        ? value
        : void problems.push(`${path}: must be a whole number (32-bit)`);
    case ScalarType.INT64:
      if (typeof value === "bigint") return value;
      if (Number.isSafeInteger(value)) return BigInt(value as number);
      if (typeof value === "string" && /^-?\d{1,19}$/.test(value)) return BigInt(value);
      return void problems.push(`${path}: must be a whole number`);
    default:
      return value;
  }
}

/** A known value's number, from its number, its protobuf name or its friendly (lowercase, unprefixed) name. */
function enumNumber(values: readonly { name: string; localName: string; number: number }[], value: unknown, path: string, problems: Problems): number | undefined {
  const known = values.filter((v) => v.number !== 0);
  const found =
    typeof value === "number"
      ? known.find((v) => v.number === value)
      : typeof value === "string"
        ? known.find((v) => [v.name, v.localName].some((n) => n.toLowerCase() === value.toLowerCase()))
        : undefined;
  if (found) return found.number;
  problems.push(`${path}: must be one of ${known.map((v) => v.localName.toLowerCase()).join(", ")}`);
  return undefined;
}

function timestamp(value: unknown, path: string, problems: Problems): Timestamp | undefined {
  if (value instanceof Date) {
    if (!Number.isNaN(value.getTime())) return timestampFromDate(value);
  } else if (typeof value === "string") {
    // RFC 3339 with a zone; Date.parse alone would also take "July 24" in the local zone.
    const at = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value) ? new Date(value) : null;
    if (at && !Number.isNaN(at.getTime())) return timestampFromDate(at);
  } else if (typeof value === "object" && value !== null && "seconds" in value) {
    const { seconds, nanos } = value as { seconds: unknown; nanos?: unknown };
    // seconds as protobuf-es (bigint), a number, or a string as grpc-js's proto-loader gives int64s.
    const s =
      typeof seconds === "bigint"
        ? seconds
        : Number.isSafeInteger(seconds)
          ? BigInt(seconds as number)
          : typeof seconds === "string" && /^-?\d{1,12}$/.test(seconds)
            ? BigInt(seconds)
            : null;
    if (s !== null && (nanos === undefined || Number.isInteger(nanos))) return { seconds: s, nanos: (nanos as number | undefined) ?? 0 } as Timestamp;
  }
  problems.push(`${path}: must be a Date, an RFC 3339 time ("2026-07-24T09:00:00Z") or a Timestamp`);
  return undefined;
}

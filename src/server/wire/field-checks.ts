import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError, type FieldProblem } from "../../domain/errors.js";
import type * as domain from "../../domain/model.js";
import { Sensitivity } from "../../gen/memory/v1/types_pb.js";
import { SENSITIVITY_LEVEL, toDate } from "./convert.js";

/**
 * The checks every request validation is made of. Each names the field in the
 * request's own snake_case path ("beliefs[2].confidence"); `Checks` gathers
 * the problems of a whole request into one INVALID_ARGUMENT.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const BELIEF_TYPE = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_BATCH = 1000;
export const MAX_TEXT = 8000;
export const MAX_NAME = 500;
/** Session, run and turn ids are kept to their first MAX_CONTEXT_ID characters, when recorded and when looked up. */
export const MAX_CONTEXT_ID = 200;

export function fail(field: string, problem: string): never {
  throw new InvalidArgumentError(field, problem);
}

/**
 * Runs a request's checks and keeps every field's problem instead of stopping
 * at the first, so one INVALID_ARGUMENT lists them all (no seven round trips
 * for seven missing fields). A failed check's value is never used: `done`
 * throws before anything is built from it.
 */
export class Checks {
  private readonly problems: FieldProblem[] = [];
  run<T>(check: () => T): T {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      this.problems.push(...error.problems);
      return undefined as T;
    }
  }
  done(): void {
    if (this.problems.length > 0) throw InvalidArgumentError.of(this.problems);
  }
}

export function uuid(value: string, field: string): string {
  if (!UUID.test(value)) fail(field, value === "" ? "is required" : "must be a UUID");
  return value.toLowerCase();
}

export function required(value: string, field: string, max = MAX_NAME): string {
  if (value.trim() === "") fail(field, "is required");
  if (value.length > max) fail(field, `must be at most ${max} characters`);
  return value;
}

export function optionalText(value: string, field: string, max = MAX_NAME): string {
  if (value.length > max) fail(field, `must be at most ${max} characters`);
  return value;
}

export function enumValue<P, D>(map: Map<P, D>, value: P, field: string): D {
  const out = map.get(value);
  if (out === undefined) fail(field, "must be set to a known value");
  return out;
}

export function time(ts: Timestamp | undefined, field: string): Date | null {
  if (!ts) return null;
  const d = toDate(ts);
  // Years 0001-9999, as RFC 3339 and PostgreSQL's timestamptz can both hold.
  if (!d || Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) fail(field, "is out of range");
  if (ts.nanos < 0 || ts.nanos > 999_999_999) fail(field, "has invalid nanos");
  return d;
}

export function batch<T>(items: readonly T[], field: string): readonly T[] {
  if (items.length === 0) fail(field, "must not be empty");
  if (items.length > MAX_BATCH) fail(field, `must have at most ${MAX_BATCH} entries`);
  return items;
}

export function sensitivity(value: Sensitivity, field: string, fallback: domain.SensitivityLevel): domain.SensitivityLevel {
  if (value === Sensitivity.UNSPECIFIED) return fallback;
  return enumValue(SENSITIVITY_LEVEL, value, field);
}

export function noDuplicates(ids: readonly string[], field: string, path: (i: number) => string): void {
  const c = new Checks();
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) c.run(() => fail(path(i), `duplicates an earlier entry of ${field}`));
    seen.add(id);
  });
  c.done();
}

/** Each entry of a batch checked on its own, every entry's problems reported together. */
export function eachOf<T, D>(items: readonly T[], field: string, check: (item: T, at: string) => D): D[] {
  const c = new Checks();
  const out = batch(items, field).map((item, i) => c.run(() => check(item, `${field}[${i}]`)));
  c.done();
  return out;
}

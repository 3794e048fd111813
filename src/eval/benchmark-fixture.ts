import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { SENSITIVITY, type Belief, type Episode, type Principal, type SessionType, type SensitivityLevel, type SubjectAlias } from "../domain/model.js";
import { stableUuid } from "./locomo-data.js";

/**
 * The deterministic benchmark's fixture (test/fixtures/benchmark/fixture.json):
 * hand-written beliefs per principal, and sessions of probes and mid-session
 * writes, all on a fixed clock. Beliefs are named by a readable key, unique
 * across the whole fixture; their ids are derived from it, so the same
 * fixture always loads the same rows and renders the same bytes.
 */

const isoDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d{2}-\d{2}T/.test(s), "must be an ISO 8601 date-time")
  .transform((s) => new Date(s));
const key = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "must be a lower-case kebab-case key");
const sensitivityName = z.enum(["public", "personal", "confidential", "restricted"]);

const beliefSchema = z
  .object({
    key,
    subject: z.string().min(1),
    statement: z.string().min(1),
    type: z.string().min(1),
    predicateKey: z.string().default(""),
    status: z.enum(["active", "provisional", "superseded", "expired"]).default("active"),
    confidence: z.number().min(0).max(1).default(0.9),
    authority: z.enum(["user", "affirmed", "inferred"]).default("user"),
    /** The project it was learned in (origin_scope). */
    project: z.string().min(1),
    scopeLevel: z.enum(["project", "user", "global"]).default("project"),
    portability: z.enum(["portable", "contextual", "local"]).default("portable"),
    sensitivity: sensitivityName.default("personal"),
    validFrom: isoDate.default(new Date("2026-01-01T00:00:00Z")),
    validTo: isoDate.nullable().default(null),
    /** Defaults to validFrom. */
    recordedAt: isoDate.optional(),
    supersedes: z.array(key).default([]),
    conflictsWith: z.array(key).default([]),
    evidenceCount: z.number().int().min(0).default(1),
    /** Defaults to validFrom. */
    lastEvidenceAt: isoDate.optional(),
    expiresHint: isoDate.nullable().default(null),
    flagged: z.boolean().default(false),
    /** A label, not a belief field: the statement is an injection and must render [BLOCKED] whenever it is returned. */
    poisoned: z.boolean().default(false),
  })
  .strict();

const principalSchema = z
  .object({
    tenant: z.string().min(1),
    principal: z.string().min(1),
    beliefs: z.array(z.unknown()),
    /** Keys of beliefs whose persona entry stands (excluded from snapshots). */
    personaHeld: z.array(key).default([]),
    aliases: z.array(z.object({ alias: z.string().min(1), subject: z.string().min(1) }).strict()).default([]),
    episodes: z
      .array(
        z
          .object({
            key,
            session: z.string().min(1),
            at: isoDate,
            sequence: z.number().int().min(0).default(0),
            actor: z.string().min(1).default("user"),
            kind: z.string().min(1).default("message"),
            content: z.string().min(1),
            project: z.string().min(1),
            archival: z.boolean().default(false),
            sensitivity: sensitivityName.default("personal"),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

const probeSchema = z
  .object({
    id: key,
    moment: z.enum(["snapshot", "in_turn", "child_run", "search"]),
    text: z.string().nullable().default(null),
    subjects: z.array(z.string().min(1)).default([]),
    /** Structured type anchors (structured_belief_types). */
    types: z.array(z.string().min(1)).default([]),
    /** Overrides the session's project. */
    project: z.string().min(1).optional(),
    ceiling: sensitivityName.default("personal"),
    /** A historical probe: what was believed at this valid time. */
    asOf: isoDate.nullable().default(null),
    /** The facts the task needs: consequential recall counts these. */
    expected: z.array(key).default([]),
    /** Returned without harm: neither a hit nor noise. */
    acceptable: z.array(key).default([]),
    /** Must never be returned, in any form (a policy failure). */
    forbidden: z.array(key).default([]),
    /** A task in a project other than where its expected beliefs were learned. */
    transfer: z.boolean().default(false),
    note: z.string().optional(),
  })
  .strict();

const writeSchema = z
  .object({
    write: z
      .object({
        at: isoDate,
        /** A key already defined is merged: only the fields given change. */
        beliefs: z.array(z.unknown()).min(1),
        note: z.string().optional(),
      })
      .strict(),
  })
  .strict();

const sessionSchema = z
  .object({
    id: key,
    tenant: z.string().min(1),
    principal: z.string().min(1),
    project: z.string().min(1),
    sessionType: z.enum(["interactive", "async", "child"]).default("interactive"),
    /** The clock when the session opens; defaults to the fixture's clock. */
    start: isoDate.optional(),
    steps: z.array(z.unknown()).min(1),
  })
  .strict();

const fixtureSchema = z
  .object({
    description: z.string().optional(),
    clock: isoDate,
    principals: z.array(principalSchema).min(1),
    sessions: z.array(sessionSchema).min(1),
  })
  .strict();

export interface FixtureProbe {
  kind: "probe";
  id: string;
  moment: "snapshot" | "in_turn" | "child_run" | "search";
  text: string | null;
  subjects: string[];
  types: string[];
  project: string;
  ceiling: SensitivityLevel;
  asOf: Date | null;
  expected: string[];
  acceptable: string[];
  forbidden: string[];
  transfer: boolean;
  /** Not in the fixture's JSON: a run may ask the probe with this relevance floor (0: none) instead of the policy's. */
  minScore?: number;
}

export interface FixtureWrite {
  kind: "write";
  at: Date;
  beliefs: Belief[];
}

export interface FixtureSession {
  id: string;
  principal: Principal;
  project: string;
  sessionType: SessionType;
  start: Date;
  steps: (FixtureProbe | FixtureWrite)[];
}

export interface FixturePrincipal {
  principal: Principal;
  beliefs: Belief[];
  episodes: Episode[];
  personaHeld: string[];
  aliases: SubjectAlias[];
}

export interface BenchmarkFixture {
  clock: Date;
  principals: FixturePrincipal[];
  sessions: FixtureSession[];
  /** Belief id → fixture key, for every belief of every principal. */
  keyOf: ReadonlyMap<string, string>;
  /** Keys labelled poisoned. */
  poisoned: ReadonlySet<string>;
  /** sha256 of the fixture's text, so a fixture edit shows in the baseline. */
  sha256: string;
}

export class FixtureError extends Error {
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = "FixtureError";
  }
}

/** The belief id a fixture key loads as. */
export function fixtureBeliefId(beliefKey: string): string {
  return stableUuid(`recall-benchmark/${beliefKey}`);
}

export async function readBenchmarkFixture(file: string): Promise<BenchmarkFixture> {
  return parseBenchmarkFixture(await readFile(file, "utf8"));
}

/** Parses and checks a fixture; an error names the offending field's path. */
export function parseBenchmarkFixture(text: string): BenchmarkFixture {
  const raw = fixtureSchema.safeParse(JSON.parse(text));
  if (!raw.success) throw fromZod(raw.error, "");
  const f = raw.data;
  const rawDefs = new Map<string, Record<string, unknown>>();
  const owner = new Map<string, string>();
  const poisoned = new Set<string>();
  const references: { path: string; keys: string[] }[] = [];
  const principalKey = (tenant: string, principal: string) => `${tenant}/${principal}`;

  const toBelief = (input: unknown, path: string, merge: boolean): Belief => {
    const given = (input ?? {}) as Record<string, unknown>;
    const previous = merge && typeof given.key === "string" ? rawDefs.get(given.key) : undefined;
    const merged = { ...(previous ?? {}), ...given };
    const parsed = beliefSchema.safeParse(merged);
    if (!parsed.success) throw fromZod(parsed.error, path);
    const b = parsed.data;
    rawDefs.set(b.key, merged);
    references.push({ path: `${path}.supersedes`, keys: b.supersedes }, { path: `${path}.conflictsWith`, keys: b.conflictsWith });
    if (b.poisoned) poisoned.add(b.key);
    return {
      beliefId: fixtureBeliefId(b.key),
      subject: b.subject,
      statement: b.statement,
      beliefType: b.type,
      predicateKey: b.predicateKey,
      status: b.status,
      confidence: b.confidence,
      authority: b.authority,
      originScope: b.project,
      scopeLevel: b.scopeLevel,
      portability: b.portability,
      sensitivity: SENSITIVITY[b.sensitivity],
      validFrom: b.validFrom,
      validTo: b.validTo,
      recordedAt: b.recordedAt ?? b.validFrom,
      retractedAt: null,
      supersedes: b.supersedes.map(fixtureBeliefId),
      conflictsWith: b.conflictsWith.map(fixtureBeliefId),
      evidenceCount: b.evidenceCount,
      lastEvidenceAt: b.lastEvidenceAt ?? b.validFrom,
      expiresHint: b.expiresHint,
      flaggedForReview: b.flagged,
      sourceEpisodeIds: [],
    };
  };

  const principals: FixturePrincipal[] = f.principals.map((p, i) => {
    const who = principalKey(p.tenant, p.principal);
    const beliefs = p.beliefs.map((input, j) => {
      const path = `principals[${i}].beliefs[${j}]`;
      const b = toBelief(input, path, false);
      const k = (input as { key: string }).key;
      if (owner.has(k)) throw new FixtureError(`${path}.key`, `"${k}" is defined twice`);
      owner.set(k, who);
      return b;
    });
    p.personaHeld.forEach((k, j) => requireOwned(owner, k, who, `principals[${i}].personaHeld[${j}]`));
    const episodes: Episode[] = p.episodes.map((e) => ({
      episodeId: stableUuid(`recall-benchmark/episode/${e.key}`),
      sessionId: e.session,
      occurredAt: e.at,
      sequence: e.sequence,
      actor: e.actor,
      kind: e.kind,
      content: e.content,
      project: e.project,
      archival: e.archival,
      sensitivity: SENSITIVITY[e.sensitivity],
    }));
    return { principal: { tenantId: p.tenant, principalId: p.principal }, beliefs, episodes, personaHeld: p.personaHeld, aliases: p.aliases };
  });
  const known = new Set(principals.map((p) => principalKey(p.principal.tenantId, p.principal.principalId)));

  const probeIds = new Set<string>();
  const sessions: FixtureSession[] = f.sessions.map((s, i) => {
    const who = principalKey(s.tenant, s.principal);
    if (!known.has(who)) throw new FixtureError(`sessions[${i}].principal`, `no principal ${who} in principals`);
    const steps = s.steps.map((step, j): FixtureProbe | FixtureWrite => {
      const path = `sessions[${i}].steps[${j}]`;
      if (step !== null && typeof step === "object" && "write" in step) {
        const w = writeSchema.safeParse(step);
        if (!w.success) throw fromZod(w.error, path);
        const beliefs = w.data.write.beliefs.map((input, k) => {
          const bPath = `${path}.write.beliefs[${k}]`;
          const bKey = (input as { key?: unknown } | null)?.key;
          if (typeof bKey === "string" && owner.has(bKey) && owner.get(bKey) !== who) {
            throw new FixtureError(`${bPath}.key`, `"${bKey}" belongs to ${owner.get(bKey)}`);
          }
          const b = toBelief(input, bPath, true);
          owner.set(bKey as string, who);
          return b;
        });
        return { kind: "write", at: w.data.write.at, beliefs };
      }
      const p = probeSchema.safeParse(step);
      if (!p.success) throw fromZod(p.error, path);
      const probe = p.data;
      if (probeIds.has(probe.id)) throw new FixtureError(`${path}.id`, `probe "${probe.id}" is defined twice`);
      probeIds.add(probe.id);
      for (const field of ["expected", "acceptable", "forbidden"] as const) {
        probe[field].forEach((k, n) => {
          if (!owner.has(k)) throw new FixtureError(`${path}.${field}[${n}]`, `no belief "${k}"`);
        });
      }
      return {
        kind: "probe",
        id: probe.id,
        moment: probe.moment,
        text: probe.text,
        subjects: probe.subjects,
        types: probe.types,
        project: probe.project ?? s.project,
        ceiling: SENSITIVITY[probe.ceiling],
        asOf: probe.asOf,
        expected: probe.expected,
        acceptable: probe.acceptable,
        forbidden: probe.forbidden,
        transfer: probe.transfer,
      };
    });
    return {
      id: s.id,
      principal: { tenantId: s.tenant, principalId: s.principal },
      project: s.project,
      sessionType: s.sessionType,
      start: s.start ?? f.clock,
      steps,
    };
  });

  for (const r of references) {
    r.keys.forEach((k, n) => {
      if (!owner.has(k)) throw new FixtureError(`${r.path}[${n}]`, `no belief "${k}"`);
    });
  }

  return {
    clock: f.clock,
    principals,
    sessions,
    keyOf: new Map([...owner.keys()].map((k) => [fixtureBeliefId(k), k])),
    poisoned,
    sha256: createHash("sha256").update(text, "utf8").digest("hex"),
  };
}

function requireOwned(owner: Map<string, string>, k: string, who: string, path: string): void {
  if (owner.get(k) !== who) throw new FixtureError(path, `no belief "${k}" of ${who}`);
}

function fromZod(error: z.ZodError, prefix: string): FixtureError {
  const issue = error.issues[0]!;
  const path = issue.path.reduce<string>(
    (acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc === "" ? String(part) : `${acc}.${String(part)}`),
    prefix,
  );
  return new FixtureError(path === "" ? "fixture" : path, issue.message);
}

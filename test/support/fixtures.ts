import { randomUUID } from "node:crypto";
import type { Belief, Episode, Principal, RecallQuery } from "../../src/domain/model.js";
import { SENSITIVITY } from "../../src/domain/model.js";

/** A unique principal per test, so tests never see each other's rows. */
export function newPrincipal(label = "p"): Principal {
  const suffix = randomUUID().slice(0, 8);
  return { tenantId: `tenant-${suffix}`, principalId: `${label}-${suffix}` };
}

export const T0 = new Date("2026-01-01T00:00:00Z");

/** A valid active belief; override what the test is about. */
export function belief(overrides: Partial<Belief> = {}): Belief {
  return {
    beliefId: randomUUID(),
    subject: "Andy",
    statement: "Andy prefers concise writing.",
    beliefType: "preference",
    predicateKey: "",
    status: "active",
    confidence: 0.9,
    authority: "user",
    originScope: "veetbot",
    scopeLevel: "project",
    portability: "portable",
    sensitivity: SENSITIVITY.personal,
    validFrom: T0,
    validTo: null,
    recordedAt: T0,
    retractedAt: null,
    supersedes: [],
    conflictsWith: [],
    evidenceCount: 1,
    lastEvidenceAt: T0,
    expiresHint: null,
    flaggedForReview: false,
    sourceEpisodeIds: [],
    ...overrides,
  };
}

export function episode(overrides: Partial<Episode> = {}): Episode {
  return {
    episodeId: randomUUID(),
    sessionId: "s1",
    occurredAt: T0,
    sequence: 0,
    actor: "user",
    kind: "message",
    content: "hello",
    project: "veetbot",
    archival: false,
    sensitivity: SENSITIVITY.personal,
    ...overrides,
  };
}

/** A live (non-historical) query in project "veetbot"; override what the test is about. */
export function recallQuery(overrides: Partial<RecallQuery> = {}): RecallQuery {
  return {
    currentScope: "veetbot",
    text: null,
    subjects: [],
    beliefTypes: [],
    structuredBeliefTypes: [],
    includeOwnedResources: false,
    asOf: null,
    knownAt: null,
    includeSuperseded: false,
    includeProvisional: true,
    profile: "task",
    budgetTokens: 1000,
    maxItems: 10,
    minScore: 0,
    ...overrides,
  };
}

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import {
  GetTraceRequestSchema,
  RecallEpisodesRequestSchema,
  RecallRequestSchema,
  SearchRequestSchema,
} from "../../src/gen/memory/v1/memory_service_pb.js";
import {
  Authority,
  BeliefSchema,
  BeliefStatus,
  EpisodeSchema,
  Moment,
  Portability,
  Profile,
  RecallQuerySchema,
  ScopeLevel,
  Sensitivity,
  SurfaceSchema,
} from "../../src/gen/memory/v1/types_pb.js";
import {
  AppendEpisodesRequestSchema,
  DeleteSessionTracesRequestSchema,
  PutBeliefsRequestSchema,
  PutSubjectAliasesRequestSchema,
  RecordCitationsRequestSchema,
  RejectBeliefRequestSchema,
  RejectionKind,
} from "../../src/gen/memory/v1/write_service_pb.js";
import * as validate from "../../src/server/wire/validate.js";

const NOW = new Date("2026-07-24T09:00:00Z");
const T0 = new Date("2026-01-01T00:00:00Z");
const T1 = new Date("2026-02-01T00:00:00Z");
const ts = (d: Date) => timestampFromDate(d);

const B1 = "11111111-1111-4111-8111-111111111111";
const B2 = "22222222-2222-4222-8222-222222222222";
const B3 = "33333333-3333-4333-8333-333333333333";
const E1 = "eeeeeeee-1111-4111-8111-111111111111";
const E2 = "eeeeeeee-2222-4222-8222-222222222222";

type BeliefInit = MessageInitShape<typeof BeliefSchema>;

function pbBelief(init: BeliefInit = {}) {
  return create(BeliefSchema, {
    beliefId: B1,
    subject: "Andy",
    statement: "Andy prefers concise writing.",
    beliefType: "preference",
    status: BeliefStatus.ACTIVE,
    confidence: 0.9,
    authority: Authority.USER,
    originScope: "veetbot",
    scopeLevel: ScopeLevel.PROJECT,
    portability: Portability.PORTABLE,
    ...init,
  });
}

function pbEpisode(init: MessageInitShape<typeof EpisodeSchema> = {}) {
  return create(EpisodeSchema, {
    episodeId: E1,
    sessionId: "s1",
    occurredAt: ts(T0),
    sequence: 7n,
    actor: "user",
    kind: "message",
    content: "hello",
    project: "veetbot",
    ...init,
  });
}

const putBeliefs = (...beliefs: BeliefInit[]) =>
  validate.putBeliefs(create(PutBeliefsRequestSchema, { beliefs: beliefs.map(pbBelief) }), NOW);

/** Runs fn, expects InvalidArgumentError, returns its message. */
function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as Error).message;
  }
  throw new Error("expected InvalidArgumentError");
}

describe("putBeliefs: valid input", () => {
  it("maps a minimal belief to the domain with defaults", () => {
    expect(putBeliefs({})).toEqual([
      {
        beliefId: B1,
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
        sensitivity: 2,
        validFrom: NOW,
        validTo: null,
        recordedAt: NOW,
        retractedAt: null,
        supersedes: [],
        conflictsWith: [],
        evidenceCount: 1,
        lastEvidenceAt: NOW,
        expiresHint: null,
        flaggedForReview: false,
        sourceEpisodeIds: [],
      },
    ]);
  });

  it("defaults valid_from and last_evidence_at to recorded_at when it is given", () => {
    const [b] = putBeliefs({ recordedAt: ts(T0) });
    expect(b!.recordedAt).toEqual(T0);
    expect(b!.validFrom).toEqual(T0);
    expect(b!.lastEvidenceAt).toEqual(T0);
  });

  it("maps every field that is given", () => {
    const [b] = putBeliefs({
      beliefId: B1.toUpperCase(),
      predicateKey: "writing_style",
      status: BeliefStatus.PROVISIONAL,
      authority: Authority.INFERRED,
      scopeLevel: ScopeLevel.GLOBAL,
      portability: Portability.LOCAL,
      sensitivity: Sensitivity.CONFIDENTIAL,
      validFrom: ts(T0),
      validTo: ts(T1),
      recordedAt: ts(T0),
      retractedAt: ts(T1),
      supersedes: [B2.toUpperCase()],
      conflictsWith: [B3],
      evidenceCount: 5,
      lastEvidenceAt: ts(T1),
      expiresHint: ts(T1),
      flaggedForReview: true,
      sourceEpisodeIds: [E1],
    });
    expect(b).toMatchObject({
      beliefId: B1,
      predicateKey: "writing_style",
      status: "provisional",
      authority: "inferred",
      scopeLevel: "global",
      portability: "local",
      sensitivity: 3,
      validFrom: T0,
      validTo: T1,
      recordedAt: T0,
      retractedAt: T1,
      supersedes: [B2],
      conflictsWith: [B3],
      evidenceCount: 5,
      lastEvidenceAt: T1,
      expiresHint: T1,
      flaggedForReview: true,
      sourceEpisodeIds: [E1],
    });
  });

  it("maps each enum value", () => {
    const statuses = [BeliefStatus.ACTIVE, BeliefStatus.PROVISIONAL, BeliefStatus.SUPERSEDED, BeliefStatus.EXPIRED];
    expect(statuses.map((status) => putBeliefs({ status })[0]!.status)).toEqual(["active", "provisional", "superseded", "expired"]);
    const authorities = [Authority.USER, Authority.AFFIRMED, Authority.INFERRED];
    expect(authorities.map((authority) => putBeliefs({ authority })[0]!.authority)).toEqual(["user", "affirmed", "inferred"]);
    const sensitivities = [Sensitivity.PUBLIC, Sensitivity.PERSONAL, Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED];
    expect(sensitivities.map((sensitivity) => putBeliefs({ sensitivity })[0]!.sensitivity)).toEqual([1, 2, 3, 4]);
  });

  it("raises evidence_count 0 to 1", () => {
    expect(putBeliefs({ evidenceCount: 0 })[0]!.evidenceCount).toBe(1);
  });

  it("accepts confidence 0 and 1", () => {
    expect(putBeliefs({ confidence: 0 })[0]!.confidence).toBe(0);
    expect(putBeliefs({ confidence: 1 })[0]!.confidence).toBe(1);
  });

  it("accepts several beliefs and keeps their order", () => {
    expect(putBeliefs({ beliefId: B2 }, { beliefId: B1 }).map((b) => b.beliefId)).toEqual([B2, B1]);
  });
});

describe("putBeliefs: invalid input", () => {
  it("rejects an empty batch", () => {
    expect(invalid(() => validate.putBeliefs(create(PutBeliefsRequestSchema, {}), NOW))).toBe("beliefs: must not be empty");
  });

  it("rejects more than 1000 beliefs", () => {
    const beliefs = Array.from({ length: 1001 }, () => pbBelief());
    expect(invalid(() => validate.putBeliefs(create(PutBeliefsRequestSchema, { beliefs }), NOW))).toBe(
      "beliefs: must have at most 1000 entries",
    );
  });

  it.each<[string, BeliefInit, string]>([
    ["confidence above 1", { confidence: 1.5 }, "beliefs[1].confidence: must be between 0 and 1"],
    ["negative confidence", { confidence: -0.1 }, "beliefs[1].confidence: must be between 0 and 1"],
    ["NaN confidence", { confidence: Number.NaN }, "beliefs[1].confidence: must be between 0 and 1"],
    ["infinite confidence", { confidence: Number.POSITIVE_INFINITY }, "beliefs[1].confidence: must be between 0 and 1"],
    ["empty belief_id", { beliefId: "" }, "beliefs[1].belief_id: is required"],
    ["non-UUID belief_id", { beliefId: "belief-1" }, "beliefs[1].belief_id: must be a UUID"],
    ["UUID with braces", { beliefId: `{${B2}}` }, "beliefs[1].belief_id: must be a UUID"],
    ["empty subject", { subject: "" }, "beliefs[1].subject: is required"],
    ["blank subject", { subject: "   " }, "beliefs[1].subject: is required"],
    ["long subject", { subject: "x".repeat(501) }, "beliefs[1].subject: must be at most 500 characters"],
    ["empty statement", { statement: "" }, "beliefs[1].statement: is required"],
    ["long statement", { statement: "x".repeat(8001) }, "beliefs[1].statement: must be at most 8000 characters"],
    ["empty belief_type", { beliefType: "" }, "beliefs[1].belief_type: is required"],
    ["camelCase belief_type", { beliefType: "userModel" }, "beliefs[1].belief_type: must be snake_case (a-z, 0-9, _)"],
    ["belief_type with a digit first", { beliefType: "9lives" }, "beliefs[1].belief_type: must be snake_case (a-z, 0-9, _)"],
    ["long belief_type", { beliefType: "a".repeat(65) }, "beliefs[1].belief_type: must be at most 64 characters"],
    ["long predicate_key", { predicateKey: "k".repeat(501) }, "beliefs[1].predicate_key: must be at most 500 characters"],
    ["unset status", { status: BeliefStatus.UNSPECIFIED }, "beliefs[1].status: must be set to a known value"],
    ["unknown status", { status: 42 as BeliefStatus }, "beliefs[1].status: must be set to a known value"],
    ["unset authority", { authority: Authority.UNSPECIFIED }, "beliefs[1].authority: must be set to a known value"],
    ["empty origin_scope", { originScope: "" }, "beliefs[1].origin_scope: is required"],
    ["unset scope_level", { scopeLevel: ScopeLevel.UNSPECIFIED }, "beliefs[1].scope_level: must be set to a known value"],
    ["unset portability", { portability: Portability.UNSPECIFIED }, "beliefs[1].portability: must be set to a known value"],
    ["unknown sensitivity", { sensitivity: 9 as Sensitivity }, "beliefs[1].sensitivity: must be set to a known value"],
    ["negative evidence_count", { evidenceCount: -1 }, "beliefs[1].evidence_count: must not be negative"],
    ["valid_to equal to valid_from", { validFrom: ts(T0), validTo: ts(T0) }, "beliefs[1].valid_to: must be after valid_from"],
    ["valid_to before valid_from", { validFrom: ts(T1), validTo: ts(T0) }, "beliefs[1].valid_to: must be after valid_from"],
    ["valid_to before the defaulted valid_from", { validTo: ts(T0) }, "beliefs[1].valid_to: must be after valid_from"],
    ["retracted_at before recorded_at", { recordedAt: ts(T1), retractedAt: ts(T0) }, "beliefs[1].retracted_at: must not be before recorded_at"],
    ["recorded_at past year 9999", { recordedAt: { seconds: 253_402_300_800n, nanos: 0 } }, "beliefs[1].recorded_at: is out of range"],
    ["valid_from before year 1", { validFrom: { seconds: -62_135_596_801n, nanos: 0 } }, "beliefs[1].valid_from: is out of range"],
    ["negative nanos", { expiresHint: { seconds: 1_800_000_000n, nanos: -1 } }, "beliefs[1].expires_hint: has invalid nanos"],
    ["too many nanos", { lastEvidenceAt: { seconds: 1_800_000_000n, nanos: 1_000_000_000 } }, "beliefs[1].last_evidence_at: has invalid nanos"],
    ["bad supersedes entry", { supersedes: [B3, "nope"] }, "beliefs[1].supersedes[1]: must be a UUID"],
    ["empty conflicts_with entry", { conflictsWith: [""] }, "beliefs[1].conflicts_with[0]: is required"],
    ["bad source_episode_ids entry", { sourceEpisodeIds: [E1, E2, "x"] }, "beliefs[1].source_episode_ids[2]: must be a UUID"],
  ])("rejects %s with the exact field path", (_, init, message) => {
    expect(invalid(() => putBeliefs({ beliefId: B1 }, { beliefId: B2, ...init }))).toBe(message);
  });

  it("rejects duplicate belief ids in one request, naming the later entry", () => {
    expect(invalid(() => putBeliefs({ beliefId: B1 }, { beliefId: B2 }, { beliefId: B1 }))).toBe(
      "beliefs[2].belief_id: duplicates an earlier entry of belief_id",
    );
  });

  it("treats ids that differ only in case as duplicates", () => {
    expect(invalid(() => putBeliefs({ beliefId: B1 }, { beliefId: B1.toUpperCase() }))).toBe(
      "beliefs[1].belief_id: duplicates an earlier entry of belief_id",
    );
  });

  it("carries the field on the error", () => {
    try {
      putBeliefs({ confidence: 2 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).toBe("beliefs[0].confidence");
    }
  });
});

describe("every problem in one error", () => {
  it("lists each missing or bad field of every belief, in field order", () => {
    const bare = create(BeliefSchema, { beliefId: B2 });
    const message = invalid(() =>
      validate.putBeliefs(create(PutBeliefsRequestSchema, { beliefs: [pbBelief({ confidence: 2, subject: "" }), bare] }), NOW),
    );
    expect(message).toBe(
      [
        "beliefs[0].subject: is required",
        "beliefs[0].confidence: must be between 0 and 1",
        "beliefs[1].subject: is required",
        "beliefs[1].statement: is required",
        "beliefs[1].belief_type: is required",
        "beliefs[1].status: must be set to a known value",
        "beliefs[1].authority: must be set to a known value",
        "beliefs[1].origin_scope: is required",
        "beliefs[1].scope_level: must be set to a known value",
        "beliefs[1].portability: must be set to a known value",
      ].join("; "),
    );
  });

  it("keeps every problem on the error, the first as its field", () => {
    try {
      putBeliefs({ subject: "", supersedes: ["x", "y"] });
      expect.unreachable();
    } catch (error) {
      const e = error as InvalidArgumentError;
      expect(e.field).toBe("beliefs[0].subject");
      expect(e.problems.map((p) => p.field)).toEqual(["beliefs[0].subject", "beliefs[0].supersedes[0]", "beliefs[0].supersedes[1]"]);
    }
  });

  it("reports every duplicate id", () => {
    expect(invalid(() => putBeliefs({ beliefId: B1 }, { beliefId: B1 }, { beliefId: B1 }))).toBe(
      "beliefs[1].belief_id: duplicates an earlier entry of belief_id; beliefs[2].belief_id: duplicates an earlier entry of belief_id",
    );
  });

  it("lists each bad field of each episode", () => {
    const bad = create(EpisodeSchema, { episodeId: "nope" });
    expect(invalid(() => validate.appendEpisodes(create(AppendEpisodesRequestSchema, { episodes: [pbEpisode(), bad] })))).toBe(
      "episodes[1].episode_id: must be a UUID; episodes[1].session_id: is required; episodes[1].occurred_at: is required; episodes[1].content: is required",
    );
  });

  it("lists a rejection's own fields with its correction's", () => {
    const req = create(RejectBeliefRequestSchema, {
      beliefId: "x",
      kind: RejectionKind.CHANGED,
      correction: pbBelief({ beliefId: B2, statement: "" }),
    });
    expect(invalid(() => validate.rejection(req, NOW))).toBe(
      "rejection_id: is required; belief_id: must be a UUID; correction.statement: is required",
    );
  });
});

describe("appendEpisodes", () => {
  const append = (...episodes: MessageInitShape<typeof EpisodeSchema>[]) =>
    validate.appendEpisodes(create(AppendEpisodesRequestSchema, { episodes: episodes.map(pbEpisode) }));

  it("maps a valid episode with defaults", () => {
    expect(append({})).toEqual([
      {
        episodeId: E1,
        sessionId: "s1",
        occurredAt: T0,
        sequence: 7,
        actor: "user",
        kind: "message",
        content: "hello",
        project: "veetbot",
        archival: false,
        sensitivity: 2,
      },
    ]);
  });

  it("maps archival, sensitivity and upper-case ids", () => {
    const [e] = append({ episodeId: E1.toUpperCase(), archival: true, sensitivity: Sensitivity.RESTRICTED });
    expect(e).toMatchObject({ episodeId: E1, archival: true, sensitivity: 4 });
  });

  it("rejects an empty batch", () => {
    expect(invalid(() => validate.appendEpisodes(create(AppendEpisodesRequestSchema, {})))).toBe("episodes: must not be empty");
  });

  it.each<[string, MessageInitShape<typeof EpisodeSchema>, string]>([
    ["missing occurred_at", { occurredAt: undefined }, "episodes[1].occurred_at: is required"],
    ["empty episode_id", { episodeId: "" }, "episodes[1].episode_id: is required"],
    ["bad episode_id", { episodeId: "ep-2" }, "episodes[1].episode_id: must be a UUID"],
    ["blank session_id", { sessionId: " " }, "episodes[1].session_id: is required"],
    ["empty content", { content: "" }, "episodes[1].content: is required"],
    ["long content", { content: "x".repeat(64_001) }, "episodes[1].content: must be at most 64000 characters"],
    ["long actor", { actor: "a".repeat(501) }, "episodes[1].actor: must be at most 500 characters"],
    ["unknown sensitivity", { sensitivity: 7 as Sensitivity }, "episodes[1].sensitivity: must be set to a known value"],
  ])("rejects %s", (_, init, message) => {
    expect(invalid(() => append({ episodeId: E1 }, { episodeId: E2, ...init }))).toBe(message);
  });

  it("rejects duplicate episode ids", () => {
    expect(invalid(() => append({ episodeId: E1 }, { episodeId: E1 }))).toBe(
      "episodes[1].episode_id: duplicates an earlier entry of episode_id",
    );
  });
});

describe("subjectAliases", () => {
  const aliases = (...list: { alias: string; subject: string }[]) =>
    validate.subjectAliases(create(PutSubjectAliasesRequestSchema, { aliases: list }));

  it("maps valid aliases", () => {
    expect(aliases({ alias: "Acme", subject: "Acme Corp" }, { alias: "ACME Inc", subject: "Acme Corp" })).toEqual([
      { alias: "Acme", subject: "Acme Corp" },
      { alias: "ACME Inc", subject: "Acme Corp" },
    ]);
  });

  it("rejects an empty batch", () => {
    expect(invalid(() => aliases())).toBe("aliases: must not be empty");
  });

  it("rejects a blank alias or subject", () => {
    expect(invalid(() => aliases({ alias: "Acme", subject: "Acme Corp" }, { alias: " ", subject: "Acme Corp" }))).toBe(
      "aliases[1].alias: is required",
    );
    expect(invalid(() => aliases({ alias: "Acme", subject: "" }))).toBe("aliases[0].subject: is required");
  });

  it("rejects an alias repeated in another case", () => {
    expect(invalid(() => aliases({ alias: "Acme", subject: "Acme Corp" }, { alias: "ACME", subject: "Other" }))).toBe(
      "aliases[1].alias: duplicates an earlier entry of alias",
    );
  });
});

describe("citations", () => {
  const cite = (traceId: string, beliefIds: string[]) =>
    validate.citations(create(RecordCitationsRequestSchema, { traceId, beliefIds }));

  it("maps and lower-cases ids", () => {
    expect(cite(B3.toUpperCase(), [B1, B2.toUpperCase()])).toEqual({ traceId: B3, beliefIds: [B1, B2], turnId: null });
  });

  it("requires a trace id", () => {
    expect(invalid(() => cite("", [B1]))).toBe("trace_id: is required");
    expect(invalid(() => cite("trace", [B1]))).toBe("trace_id: must be a UUID");
  });

  it("requires at least one valid belief id", () => {
    expect(invalid(() => cite(B3, []))).toBe("belief_ids: must not be empty");
    expect(invalid(() => cite(B3, [B1, "x"]))).toBe("belief_ids[1]: must be a UUID or a short id of the block ([m:8f21a0c3])");
  });
});

describe("rejection", () => {
  const R = "99999999-9999-4999-8999-999999999999";
  const reject = (init: MessageInitShape<typeof RejectBeliefRequestSchema>) =>
    validate.rejection(create(RejectBeliefRequestSchema, { rejectionId: R, beliefId: B1, ...init }), NOW);

  it("maps NOT_TRUE", () => {
    expect(reject({ kind: RejectionKind.NOT_TRUE, reason: "never said that" })).toEqual({
      rejectionId: R,
      beliefId: B1,
      kind: "not_true",
      correction: null,
      scope: "",
      reason: "never said that",
    });
  });

  it("maps UNSPECIFIED to an undifferentiated rejection", () => {
    expect(reject({}).kind).toBe("unspecified");
  });

  it("maps CHANGED with its correction, applying belief defaults", () => {
    const out = reject({ kind: RejectionKind.CHANGED, correction: pbBelief({ beliefId: B2, supersedes: [B1] }) });
    expect(out.kind).toBe("changed");
    expect(out.correction).toMatchObject({ beliefId: B2, supersedes: [B1], recordedAt: NOW, validFrom: NOW, evidenceCount: 1, sensitivity: 2 });
  });

  it("maps NOT_HERE with its scope", () => {
    expect(reject({ kind: RejectionKind.NOT_HERE, scope: "atlas" })).toMatchObject({ kind: "not_here", scope: "atlas" });
  });

  it("rejects CHANGED without a correction", () => {
    expect(invalid(() => reject({ kind: RejectionKind.CHANGED }))).toBe("correction: is required when kind is CHANGED");
  });

  it("validates the correction under the correction. path", () => {
    expect(invalid(() => reject({ kind: RejectionKind.CHANGED, correction: pbBelief({ beliefId: B2, confidence: 3 }) }))).toBe(
      "correction.confidence: must be between 0 and 1",
    );
    expect(invalid(() => reject({ kind: RejectionKind.CHANGED, correction: pbBelief({ beliefId: "" }) }))).toBe(
      "correction.belief_id: is required",
    );
  });

  it("rejects a correction that is the rejected belief itself, in any case", () => {
    expect(invalid(() => reject({ kind: RejectionKind.CHANGED, correction: pbBelief({ beliefId: B1.toUpperCase() }) }))).toBe(
      "correction.belief_id: must differ from belief_id",
    );
  });

  it("rejects a correction for any kind other than CHANGED", () => {
    for (const kind of [RejectionKind.UNSPECIFIED, RejectionKind.NOT_TRUE, RejectionKind.NOT_HERE]) {
      expect(invalid(() => reject({ kind, scope: "atlas", correction: pbBelief({ beliefId: B2 }) }))).toBe(
        "correction: is only allowed when kind is CHANGED",
      );
    }
  });

  it("rejects NOT_HERE without a scope", () => {
    expect(invalid(() => reject({ kind: RejectionKind.NOT_HERE }))).toBe("scope: is required");
    expect(invalid(() => reject({ kind: RejectionKind.NOT_HERE, scope: "  " }))).toBe("scope: is required");
  });

  it("rejects an unknown kind", () => {
    expect(invalid(() => reject({ kind: 7 as RejectionKind }))).toBe("kind: must be set to a known value");
  });

  it("requires valid rejection and belief ids", () => {
    expect(invalid(() => reject({ rejectionId: "" }))).toBe("rejection_id: is required");
    expect(invalid(() => reject({ beliefId: "b1" }))).toBe("belief_id: must be a UUID");
  });

  it("limits the reason to 2000 characters", () => {
    expect(reject({ reason: "r".repeat(2000) }).reason).toHaveLength(2000);
    expect(invalid(() => reject({ reason: "r".repeat(2001) }))).toBe("reason: must be at most 2000 characters");
  });
});

describe("read-request validators", () => {
  it("recallRequest requires a query", () => {
    expect(invalid(() => validate.recallRequest(create(RecallRequestSchema, {})))).toBe("query: is required");
  });

  it("recallRequest maps unset values to 'use the default'", () => {
    const out = validate.recallRequest(create(RecallRequestSchema, { query: create(RecallQuerySchema, { text: "   " }) }));
    expect(out.moment).toBe("in_turn");
    expect(out.query).toMatchObject({
      text: null,
      includeProvisional: undefined,
      profile: undefined,
      minScore: undefined,
      budgetTokens: 0,
      maxItems: 0,
      asOf: null,
      knownAt: null,
    });
  });

  it("recallRequest maps moment, profile and anchors", () => {
    const out = validate.recallRequest(
      create(RecallRequestSchema, {
        moment: Moment.SNAPSHOT,
        query: create(RecallQuerySchema, {
          text: "writing",
          subjects: ["Andy"],
          profile: Profile.DEEP,
          includeProvisional: false,
          minScore: 0,
          asOf: ts(T0),
        }),
      }),
    );
    expect(out.moment).toBe("snapshot");
    expect(out.query).toMatchObject({ text: "writing", subjects: ["Andy"], profile: "deep", includeProvisional: false, minScore: 0, asOf: T0 });
  });

  it.each<[string, MessageInitShape<typeof RecallQuerySchema>, string]>([
    ["negative budget", { budgetTokens: -1 }, "query.budget_tokens: must not be negative"],
    ["negative max_items", { maxItems: -1 }, "query.max_items: must not be negative"],
    ["NaN min_score", { minScore: Number.NaN }, "query.min_score: must be a number"],
    ["blank subject", { subjects: ["Andy", " "] }, "query.subjects[1]: is required"],
    ["too many subjects", { subjects: Array.from({ length: 101 }, (_, i) => `s${i}`) }, "query.subjects: must have at most 100 entries"],
    ["blank belief type", { beliefTypes: [""] }, "query.belief_types[0]: is required"],
    ["unknown profile", { profile: 9 as Profile }, "query.profile: must be set to a known value"],
    ["as_of out of range", { asOf: { seconds: 253_402_300_800n, nanos: 0 } }, "query.as_of: is out of range"],
  ])("recallRequest rejects %s", (_, query, message) => {
    expect(invalid(() => validate.recallRequest(create(RecallRequestSchema, { query: create(RecallQuerySchema, query) })))).toBe(message);
  });

  it("recallRequest rejects an unknown moment", () => {
    expect(
      invalid(() => validate.recallRequest(create(RecallRequestSchema, { moment: 9 as Moment, query: create(RecallQuerySchema, {}) }))),
    ).toBe("moment: must be set to a known value");
  });

  it("searchRequest requires text and maps the rest", () => {
    expect(invalid(() => validate.searchRequest(create(SearchRequestSchema, { text: " " })))).toBe("text: is required");
    expect(invalid(() => validate.searchRequest(create(SearchRequestSchema, { text: "x", budgetTokens: -5 })))).toBe(
      "budget_tokens: must not be negative",
    );
    expect(validate.searchRequest(create(SearchRequestSchema, { text: "coffee", scope: "veetbot", subjects: ["Andy"] }))).toEqual({
      currentScope: "veetbot",
      text: "coffee",
      subjects: ["Andy"],
      beliefTypes: [],
      structuredBeliefTypes: [],
      includeOwnedResources: false,
      asOf: null,
      knownAt: null,
      includeSuperseded: false,
      includeProvisional: undefined,
      profile: undefined,
      budgetTokens: 0,
      maxItems: 0,
      minScore: undefined,
    });
  });

  it("recallEpisodesRequest needs a session or a time range", () => {
    expect(invalid(() => validate.recallEpisodesRequest(create(RecallEpisodesRequestSchema, {})))).toBe(
      "session_id: is required unless start_time or end_time is set",
    );
    expect(validate.recallEpisodesRequest(create(RecallEpisodesRequestSchema, { sessionId: "s1" }))).toEqual({
      sessionId: "s1",
      startTime: null,
      endTime: null,
      includeArchival: false,
      pageSize: 50,
      budgetTokens: 0,
      archivalBudgetTokens: 0,
      callerSessionId: "s1",
      runId: "",
      turnId: "",
    });
    expect(validate.recallEpisodesRequest(create(RecallEpisodesRequestSchema, { startTime: ts(T0) })).sessionId).toBeNull();
  });

  it("recallEpisodesRequest checks the range, page size and budget", () => {
    const req = (init: MessageInitShape<typeof RecallEpisodesRequestSchema>) =>
      validate.recallEpisodesRequest(create(RecallEpisodesRequestSchema, { sessionId: "s1", ...init }));
    expect(invalid(() => req({ startTime: ts(T1), endTime: ts(T0) }))).toBe("end_time: must be after start_time");
    expect(invalid(() => req({ startTime: ts(T0), endTime: ts(T0) }))).toBe("end_time: must be after start_time");
    expect(invalid(() => req({ pageSize: 501 }))).toBe("page_size: must be between 0 and 500");
    expect(invalid(() => req({ pageSize: -1 }))).toBe("page_size: must be between 0 and 500");
    expect(invalid(() => req({ budgetTokens: -1 }))).toBe("budget_tokens: must not be negative");
    expect(req({ pageSize: 500 }).pageSize).toBe(500);
  });

  it("getTraceRequest: the operator form requires a UUID", () => {
    const req = (init: MessageInitShape<typeof GetTraceRequestSchema>) => validate.getTraceRequest(create(GetTraceRequestSchema, init), "personal");
    expect(req({ traceId: B1.toUpperCase() })).toEqual({ form: "operator", traceId: B1 });
    expect(invalid(() => req({}))).toBe("trace_id: is required");
    expect(invalid(() => req({ traceId: "abc" }))).toBe("trace_id: must be a UUID");
    expect(invalid(() => req({ traceId: B1, viewingSurface: { surfaceId: "web" } }))).toBe("viewing_surface: is only used with turn_id");
  });

  it("getTraceRequest: the user form takes a turn and a viewing surface, defaulting its ceiling", () => {
    const req = (init: MessageInitShape<typeof GetTraceRequestSchema>) => validate.getTraceRequest(create(GetTraceRequestSchema, init), "personal");
    expect(req({ turnId: "t-7" })).toEqual({ form: "user", turnId: "t-7", viewingSurface: { surfaceId: "", sensitivityCeiling: 2 } });
    expect(req({ turnId: "t-7", viewingSurface: { surfaceId: "slack", sensitivityCeiling: Sensitivity.PUBLIC } })).toEqual({
      form: "user",
      turnId: "t-7",
      viewingSurface: { surfaceId: "slack", sensitivityCeiling: 1 },
    });
    // Turn ids are kept to 200 characters when recorded, so they are looked up the same way.
    expect(req({ turnId: "x".repeat(300) })).toMatchObject({ turnId: "x".repeat(200) });
    expect(invalid(() => req({ turnId: "t", traceId: B1 }))).toBe("trace_id: must not be set together with turn_id");
    expect(invalid(() => req({ turnId: "  " }))).toBe("turn_id: is required");
    expect(invalid(() => req({ turnId: "t", viewingSurface: { sensitivityCeiling: 9 as Sensitivity } }))).toBe(
      "viewing_surface.sensitivity_ceiling: must be set to a known value",
    );
  });

  it("deleteSessionTracesRequest requires a session id", () => {
    expect(validate.deleteSessionTracesRequest(create(DeleteSessionTracesRequestSchema, { sessionId: "s-1" }))).toEqual({ sessionId: "s-1" });
    expect(invalid(() => validate.deleteSessionTracesRequest(create(DeleteSessionTracesRequestSchema, {})))).toBe("session_id: is required");
  });

  it("citations take an optional turn id (unset: the trace's own turn)", () => {
    const req = (turnId: string) => validate.citations(create(RecordCitationsRequestSchema, { traceId: B1, beliefIds: [B1], turnId }));
    expect(req("").turnId).toBeNull();
    expect(req("t-9").turnId).toBe("t-9");
  });

  it("surface defaults the ceiling from configuration", () => {
    expect(validate.surface(undefined, "personal")).toEqual({ surfaceId: "", sensitivityCeiling: 2 });
    expect(validate.surface(create(SurfaceSchema, { surfaceId: "slack" }), "public")).toEqual({ surfaceId: "slack", sensitivityCeiling: 1 });
    expect(
      validate.surface(create(SurfaceSchema, { surfaceId: "cli", sensitivityCeiling: Sensitivity.RESTRICTED }), "public"),
    ).toEqual({ surfaceId: "cli", sensitivityCeiling: 4 });
    expect(invalid(() => validate.surface(create(SurfaceSchema, { sensitivityCeiling: 8 as Sensitivity }), "public"))).toBe(
      "surface.sensitivity_ceiling: must be set to a known value",
    );
  });
});

import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { RecallResult, RecalledBelief, StoredBelief } from "../../src/domain/model.js";
import { ArmCandidateSchema, MemoryService, RecallEventSchema, type RecallEvent } from "../../src/gen/memory/v1/memory_service_pb.js";
import { RecallResultSchema } from "../../src/gen/memory/v1/types_pb.js";
import type { ArmOutcome } from "../../src/recall/arms/arm.js";
import { armResultToProto, beliefIdField } from "../../src/server/wire/arm-result.js";
import { cachedHitToProto } from "../../src/server/wire/cached-result.js";
import { recallResultToProto } from "../../src/server/wire/convert.js";
import { withPreEncodedItems } from "../../src/server/wire/recalled-item.js";
import { repeatedMessageField } from "../../src/server/wire/repeated-field.js";
import { preEncode, withPreEncoded } from "../../src/server/wire/pre-encoded.js";
import { repliesInBinary } from "../../src/server/wire/reply-format.js";
import { pick, prng, uid } from "./unit-helpers.js";

/**
 * Property: a pre-encoded reply decodes to exactly what the reflective one
 * decodes to (field order on the wire may differ; what a client reads may not).
 */

const TEXTS = [
  "",
  "Andy prefers concise writing.",
  "Ünïcödé — naïve café, 日本語のテキスト, and a rocket 🚀.",
  "A long statement ".repeat(20),
  "[BLOCKED] withheld: failed injection scan.",
];
const ARMS = ["structured", "lexical", "delta", "semantic"];
const DAY_MS = 86_400_000;

function randomResult(rand: () => number): RecallResult {
  const date = () => new Date(Date.UTC(2024, 0, 1) + Math.floor(rand() * 900 * DAY_MS) + Math.floor(rand() * 1000));
  const some = <T>(items: readonly T[], max: number) => Array.from({ length: Math.floor(rand() * (max + 1)) }, () => pick(rand, items));
  const id = () => uid(Math.floor(rand() * 1_000_000));
  const item = (): RecalledBelief => {
    const blocked = rand() < 0.2;
    return {
      beliefId: id(),
      subject: pick(rand, TEXTS),
      statement: blocked ? "" : pick(rand, TEXTS),
      beliefType: pick(rand, ["preference", "decision", "project_fact", ""]),
      status: pick(rand, ["active", "provisional", "superseded", "expired"] as const),
      confidenceBand: pick(rand, ["high", "medium", "low"] as const),
      authority: pick(rand, ["user", "affirmed", "inferred"] as const),
      originScope: pick(rand, ["veetbot", "", "atlas"]),
      portability: pick(rand, ["portable", "contextual", "local"] as const),
      carried: rand() < 0.3,
      validFrom: date(),
      validTo: rand() < 0.5 ? null : date(),
      score: rand() < 0.1 ? 0 : rand() * 2 - 0.5,
      arms: some(ARMS, 3),
      conflictWith: Array.from({ length: Math.floor(rand() * 3) }, id),
      blocked,
    };
  };
  return {
    items: Array.from({ length: Math.floor(rand() * 45) }, item),
    rendered: some(TEXTS, 40).join("\n"),
    tokens: Math.floor(rand() * 5000),
    truncated: rand() < 0.5,
    armsDegraded: some(ARMS, 2),
    traceId: id(),
    // Past 2^32, so the int64 takes more than a 32-bit varint.
    snapshotWatermark: Math.floor(rand() * 2 ** 40),
    fromCache: false,
    corrections: Array.from({ length: Math.floor(rand() * 3) }, () => ({
      beliefId: id(),
      supersededBy: rand() < 0.5 ? null : id(),
      noLongerHoldsAsOf: date(),
    })),
    asOf: rand() < 0.8 ? date() : undefined,
    knownAt: [undefined, null, date()][Math.floor(rand() * 3)],
    episodeAdvice:
      rand() < 0.5
        ? null
        : {
            reason: pick(rand, ["event_query", "subject_not_found"] as const),
            scope: { sessionId: pick(rand, ["", id()]), startTime: pick(rand, [null, date()]), endTime: pick(rand, [null, date()]), subjects: some(TEXTS, 3) },
          },
  };
}

const resultEvent = (value: ReturnType<typeof recallResultToProto>) =>
  toBinary(RecallEventSchema, create(RecallEventSchema, { event: { case: "result", value } }));

/** Decoded both ways: equal by the library's `equals`, and structurally (no field left unknown). */
function expectSameDecoding(fast: Uint8Array, reflective: Uint8Array): RecallEvent {
  const a = fromBinary(RecallEventSchema, fast);
  const b = fromBinary(RecallEventSchema, reflective);
  expect(equals(RecallEventSchema, a, b)).toBe(true);
  expect(a).toEqual(b);
  return a;
}

describe("pre-encoded replies", () => {
  it("preEncode keeps a message's fields: attached to an empty message they encode to the same bytes", () => {
    const rand = prng(11);
    for (let i = 0; i < 100; i++) {
      const message = recallResultToProto(randomResult(rand));
      const fields = preEncode(RecallResultSchema, message);
      const bytes = Buffer.from(toBinary(RecallResultSchema, withPreEncoded(RecallResultSchema, {}, fields)));
      expect(bytes.equals(toBinary(RecallResultSchema, message))).toBe(true);
    }
  });

  it("a repeated message field joined from byte parts is what the library's writer writes for those messages", () => {
    const rand = prng(17);
    for (let i = 0; i < 300; i++) {
      // Field numbers with one- to five-byte tags; parts long enough for two-byte lengths; empty ones too.
      const no = pick(rand, [1, 2, 15, 16, 2047, 2048, 262_143, 536_870_911]);
      const messages = Array.from({ length: Math.floor(rand() * 6) }, () =>
        Array.from({ length: Math.floor(rand() * 4) }, () => Uint8Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256))),
      );
      const expected = new BinaryWriter();
      for (const parts of messages) expected.tag(no, WireType.LengthDelimited).bytes(Buffer.concat(parts));
      const field = repeatedMessageField(no, messages);
      const written = new BinaryWriter();
      for (const f of field) written.tag(f.no, f.wireType).raw(f.data);
      expect(Buffer.from(written.finish())).toEqual(Buffer.from(expected.finish()));
      expect(field.length).toBe(messages.length === 0 ? 0 : 1);
    }
  });

  it("a cached snapshot hit decodes as its whole result would, with the hit's own trace id, for every hit", () => {
    const rand = prng(7);
    for (let i = 0; i < 300; i++) {
      const cached = randomResult(rand);
      // Two hits of one cached result: the second reuses the first's encoding.
      for (const traceId of [uid(2_000_000 + i), uid(3_000_000 + i)]) {
        const hit: RecallResult = { ...cached, traceId, fromCache: true };
        const decoded = expectSameDecoding(resultEvent(cachedHitToProto(cached, hit)), resultEvent(recallResultToProto(hit)));
        expect(decoded.event.case === "result" && decoded.event.value.traceId).toBe(traceId);
        expect(decoded.event.case === "result" && decoded.event.value.fromCache).toBe(true);
      }
    }
  });

  it("a result's items decode as whole messages would, a belief's fields reused while they match and encoded again when one differs", () => {
    const rand = prng(13);
    // A few beliefs, met again and again: as they were, or with one of their own fields changed (or the recall's).
    const beliefs = randomResult(rand).items.concat(randomResult(rand).items).slice(0, 12);
    const other = randomResult(rand).items;
    const fields = Object.keys(beliefs[0]!).filter((k) => k !== "beliefId") as (keyof RecalledBelief)[];
    const variant = (b: RecalledBelief): RecalledBelief => {
      if (rand() < 0.4) return b;
      const field = pick(rand, fields);
      return { ...b, [field]: pick(rand, other)[field] };
    };
    for (let i = 0; i < 300; i++) {
      const result: RecallResult = { ...randomResult(rand), items: Array.from({ length: Math.floor(rand() * 20) }, () => variant(pick(rand, beliefs))) };
      expectSameDecoding(resultEvent(withPreEncodedItems(result)), resultEvent(recallResultToProto(result)));
    }
  });

  it("an item's own fields decode as the library writes them, at the edges of their values", () => {
    const rand = prng(19);
    const scores = [0, -0, Number.NaN, Infinity, -Infinity, Number.MIN_VALUE, -Number.MAX_VALUE, 1, -1e-300];
    // Strings of one- and two-byte lengths, and of multi-byte characters.
    const strings = ["", "lexical", "ünïcödé 🚀", "x".repeat(127), "y".repeat(128), "日本語".repeat(50)];
    for (let i = 0; i < 200; i++) {
      const items = randomResult(rand).items.map((item) => ({
        ...item,
        carried: rand() < 0.5,
        score: pick(rand, scores),
        arms: Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, strings)),
        conflictWith: Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, strings)),
      }));
      const result: RecallResult = { ...randomResult(rand), items };
      // Structurally only: the library's `equals` holds NaN unequal to itself.
      const decode = (bytes: Uint8Array) => fromBinary(RecallEventSchema, bytes);
      expect(decode(resultEvent(withPreEncodedItems(result)))).toEqual(decode(resultEvent(recallResultToProto(result))));
    }
  });

  it("an arm's candidates decode with their belief ids and ranks, the ids' fields shared between calls", () => {
    const rand = prng(5);
    const outcome = (): ArmOutcome => {
      const degraded = rand() < 0.1;
      return {
        arm: pick(rand, ARMS),
        // Few distinct ids, so most candidates reuse an id's field encoded by an earlier call.
        candidates: degraded ? [] : Array.from({ length: Math.floor(rand() * 120) }, () => ({ belief: { beliefId: uid(Math.floor(rand() * 300)) } as StoredBelief, armScore: rand() })),
        latencyMs: Math.floor(rand() * 50),
        degraded,
      };
    };
    const armEvent = (o: ArmOutcome, preEncoded: boolean) =>
      toBinary(RecallEventSchema, create(RecallEventSchema, { event: { case: "arm", value: armResultToProto(o, preEncoded) } }));
    for (let i = 0; i < 300; i++) {
      const o = outcome();
      const decoded = expectSameDecoding(armEvent(o, true), armEvent(o, false));
      expect(decoded.event.case === "arm" && decoded.event.value.candidates.map((c) => c.beliefId)).toEqual(o.candidates.map((c) => c.belief.beliefId));
    }
  });

  it("an arm candidate's belief id field is the bytes toBinary writes for it", () => {
    const rand = prng(11);
    // UUIDs, the empty id, non-ASCII and lone surrogates (UTF-8 replaces them), and lengths whose varint takes two bytes.
    const ids = ["", uid(1), "é", "\u{1f600}", "\ud800", "x".repeat(127), "y".repeat(128), "z".repeat(300)];
    for (let i = 0; i < 200; i++) ids.push(Array.from({ length: Math.floor(rand() * 200) }, () => String.fromCodePoint(Math.floor(rand() * 0x2ffff))).join(""));
    for (const beliefId of ids) expect(beliefIdField(beliefId)).toEqual(toBinary(ArmCandidateSchema, create(ArmCandidateSchema, { beliefId })));
  });

  it("are used only when connect serializes the replies in binary", async () => {
    // A stand-in Recall that reports what the handler decided, through connect's own protocol handling.
    const transport = (useBinaryFormat: boolean) =>
      createRouterTransport(
        (router) =>
          router.service(MemoryService, {
            async *recall(_req, ctx) {
              yield create(RecallEventSchema, { event: { case: "result", value: create(RecallResultSchema, { rendered: String(repliesInBinary(ctx)) }) } });
            },
          }),
        { transport: { useBinaryFormat } },
      );
    for (const binary of [true, false]) {
      const events: RecallEvent[] = [];
      for await (const e of createClient(MemoryService, transport(binary)).recall({})) events.push(e);
      expect(events[0]!.event.case === "result" && events[0]!.event.value.rendered).toBe(String(binary));
    }
  });
});

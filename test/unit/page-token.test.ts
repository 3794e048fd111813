import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { decodePageToken, encodePageToken } from "../../src/server/wire/page-token.js";
import { episode } from "../support/fixtures.js";

const ID = "5a0b6c1d-2e3f-4a5b-8c6d-7e8f90a1b2c3";
const b64 = (json: string) => Buffer.from(json, "utf8").toString("base64url");

function rejects(token: string): InvalidArgumentError {
  try {
    decodePageToken(token);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error(`expected ${JSON.stringify(token)} to be rejected`);
}

describe("page tokens", () => {
  it("round-trips (occurred_at, sequence, episode_id)", () => {
    const last = episode({ episodeId: ID, occurredAt: new Date("2026-07-24T09:00:00.123Z"), sequence: 42 });
    expect(decodePageToken(encodePageToken(last))).toEqual({
      occurredAt: new Date("2026-07-24T09:00:00.123Z"),
      sequence: 42,
      episodeId: ID,
    });
  });

  it("round-trips sequence 0 and large safe sequences", () => {
    for (const sequence of [0, 1, Number.MAX_SAFE_INTEGER]) {
      const token = encodePageToken(episode({ episodeId: ID, sequence }));
      expect(decodePageToken(token).sequence).toBe(sequence);
    }
  });

  it("is URL-safe and deterministic", () => {
    const last = episode({ episodeId: ID, occurredAt: new Date("2026-07-24T09:00:00Z"), sequence: 7 });
    const token = encodePageToken(last);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(encodePageToken({ ...last })).toBe(token);
    expect(token).toBe(b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 7, ID])));
  });

  it.each([
    ["plain garbage", "not a token!"],
    ["empty", ""],
    ["base64 of non-JSON", b64("hello")],
    ["a JSON object", b64("{}")],
    ["an empty array", b64("[]")],
    ["JSON null", b64("null")],
    ["a bad date", b64(JSON.stringify(["yesterday", 1, ID]))],
    ["a fractional sequence", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 1.5, ID]))],
    ["a string sequence", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", "1", ID]))],
    ["an unsafe sequence", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 2 ** 60, ID]))],
    ["a bad episode id", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 1, "episode-1"]))],
    ["an upper-case episode id", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 1, ID.toUpperCase()]))],
    ["a missing episode id", b64(JSON.stringify(["2026-07-24T09:00:00.000Z", 1]))],
  ])("rejects %s with page_token: …", (_, token) => {
    const error = rejects(token);
    expect(error.field).toBe("page_token");
    expect(error.message).toBe("page_token: is not a token this server issued");
  });

  // Regression, fixed (src/server/wire/page-token.ts:10-13): the timestamp is passed to `new Date()` without checking
  // that it is a string, so a forged token with null or a number (never issued by
  // encodePageToken) is accepted as 1970-01-01. Low severity: it only moves the cursor.
  it("rejects a token whose timestamp is not a string", () => {
    rejects(b64(JSON.stringify([null, 1, ID])));
  });
});

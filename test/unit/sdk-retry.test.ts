import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RecallError } from "../../src/sdk/errors.js";
import { withDeadline } from "../../src/sdk/retry.js";

/** The SDK retries only where it is safe: UNAVAILABLE, within the deadline, before a stream has shown anything. */
describe("SDK retries", () => {
  const policy = { maxAttempts: 3, initialBackoffMs: 1 };
  const failing = (code: Code, thenValue?: string) => {
    let calls = 0;
    const attempt = async () => {
      calls += 1;
      if (thenValue !== undefined && calls === 2) return thenValue;
      throw new ConnectError("nope", code);
    };
    return { attempt, calls: () => calls };
  };

  it("retries UNAVAILABLE and returns the answer of the retry", async () => {
    const f = failing(Code.Unavailable, "ok");
    expect(await withDeadline("M.m", 1000, policy, f.attempt)).toBe("ok");
    expect(f.calls()).toBe(2);
  });

  it("gives up after maxAttempts with a typed error carrying the status and the attempts", async () => {
    const f = failing(Code.Unavailable);
    const error = (await withDeadline("M.m", 1000, policy, f.attempt).catch((e: unknown) => e)) as RecallError;
    expect(error).toBeInstanceOf(RecallError);
    expect([error.code, error.status, error.method, error.attempts, error.message]).toEqual([Code.Unavailable, "UNAVAILABLE", "M.m", 3, "nope"]);
  });

  it.each([Code.InvalidArgument, Code.NotFound, Code.DeadlineExceeded, Code.Internal, Code.PermissionDenied])("never retries code %i", async (code) => {
    const f = failing(code, "ok");
    const error = (await withDeadline("M.m", 1000, policy, f.attempt).catch((e: unknown) => e)) as RecallError;
    expect([error.code, f.calls()]).toEqual([code, 1]);
  });

  it("does not retry once the attempt has had a visible effect", async () => {
    const f = failing(Code.Unavailable, "ok");
    const error = (await withDeadline("M.m", 1000, policy, f.attempt, () => false).catch((e: unknown) => e)) as RecallError;
    expect([error.code, f.calls()]).toEqual([Code.Unavailable, 1]);
  });

  it("gives each attempt only what is left of the deadline, and starts no retry without time for it", async () => {
    const timeouts: number[] = [];
    const error = await withDeadline("M.m", 30, { maxAttempts: 5, initialBackoffMs: 15 }, async (timeoutMs) => {
      timeouts.push(timeoutMs);
      throw new ConnectError("down", Code.Unavailable);
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecallError);
    expect(timeouts.length).toBeLessThan(5);
    expect(timeouts.every((t) => t <= 30)).toBe(true);
  });
});

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { RecallRequestSchema, type RecallRequest } from "../../src/gen/memory/v1/memory_service_pb.js";
import { whenCallEnds } from "../../src/server/call-end.js";
import { stringCheckInterceptor } from "../../src/server/wire/string-check.js";

/** A source stream that records how far it was read and whether it was closed. */
function source<T>(items: T[], failAt = -1) {
  const seen = { read: 0, closed: false };
  const iterable = (async function* () {
    try {
      for (const [i, item] of items.entries()) {
        if (i === failAt) throw new Error("source failed");
        seen.read += 1;
        yield item;
      }
    } finally {
      seen.closed = true;
    }
  })();
  return { iterable, seen };
}

const streamed = <T>(message: AsyncIterable<T>) => ({ stream: true, message }) as unknown as StreamResponse;

describe("whenCallEnds (the log, metrics and tracing interceptors)", () => {
  it("reports a unary call's end once, with its response", async () => {
    const ends: unknown[] = [];
    const res = { stream: false, message: "m" } as unknown as UnaryResponse;
    expect(await whenCallEnds(async () => res, (e) => ends.push(e))).toBe(res);
    expect(ends).toEqual([undefined]);
  });

  it("reports a failed call with its error and throws the mapped one", async () => {
    const ends: unknown[] = [];
    const boom = new Error("boom");
    await expect(whenCallEnds(async () => Promise.reject(boom), (e) => ends.push(e), () => new Error("mapped"))).rejects.toThrow("mapped");
    expect(ends).toEqual([boom]);
  });

  it("passes a stream through in order and reports its end after the last message, once", async () => {
    const ends: unknown[] = [];
    const { iterable } = source(["a", "b", "c"]);
    const res = await whenCallEnds(async () => streamed(iterable), (e) => ends.push(e));
    const got: unknown[] = [];
    for await (const m of res.message as AsyncIterable<unknown>) {
      got.push(m);
      expect(ends).toEqual([]);
    }
    expect(got).toEqual(["a", "b", "c"]);
    expect(ends).toEqual([undefined]);
  });

  it("reports a stream that fails with its error, and the consumer gets the mapped one", async () => {
    const ends: unknown[] = [];
    const { iterable } = source(["a", "b", "c"], 1);
    const res = await whenCallEnds(async () => streamed(iterable), (e) => ends.push(e), (e) => new ConnectError(`mapped: ${(e as Error).message}`, Code.Internal));
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const m of res.message as AsyncIterable<unknown>) got.push(m);
      })(),
    ).rejects.toThrow("mapped: source failed");
    expect(got).toEqual(["a"]);
    expect(ends).toHaveLength(1);
    expect((ends[0] as Error).message).toBe("source failed");
  });

  it("reports a stream the consumer leaves early as CANCELLED, once, and closes the source", async () => {
    const ends: unknown[] = [];
    const { iterable, seen } = source(["a", "b", "c"]);
    const res = await whenCallEnds(async () => streamed(iterable), (e) => ends.push(e));
    for await (const m of res.message as AsyncIterable<unknown>) if (m === "a") break;
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeInstanceOf(ConnectError);
    expect((ends[0] as ConnectError).code).toBe(Code.Canceled);
    expect(seen).toEqual({ read: 1, closed: true });
  });
});

describe("stringCheckInterceptor on a request stream", () => {
  const request = (text: string) => create(RecallRequestSchema, { query: { text } });
  /** Runs the interceptor over a request stream and reads what the handler would. */
  function handlerReads(messages: RecallRequest[]) {
    const { iterable, seen } = source(messages);
    const read: string[] = [];
    const interceptor = stringCheckInterceptor();
    const next = async (req: { message: AsyncIterable<RecallRequest> }) => {
      for await (const m of req.message) read.push(m.query?.text ?? "");
      return {} as StreamResponse;
    };
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const run = interceptor(next as any)({ stream: true, method: { input: RecallRequestSchema }, message: iterable } as any);
    return { run, read, seen };
  }

  it("hands every clean message to the handler", async () => {
    const { run, read, seen } = handlerReads([request("a"), request("b")]);
    await run;
    expect(read).toEqual(["a", "b"]);
    expect(seen.closed).toBe(true);
  });

  it("refuses a message with a NUL, naming the field, and reads no further", async () => {
    const { run, read, seen } = handlerReads([request("a"), request("b\u0000"), request("c")]);
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).field).toBe("query.text");
    expect(read).toEqual(["a"]);
    expect(seen).toEqual({ read: 2, closed: true });
  });
});

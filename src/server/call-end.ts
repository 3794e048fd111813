import { Code, ConnectError, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";

/**
 * Runs a call and reports its end exactly once, for the interceptors that
 * log, count or trace calls: a unary call ends with its response, a
 * streaming call with its last message (or its error). A stream the client
 * abandons is closed early and ends as CANCELLED. `mapError` turns what was
 * thrown into what the caller gets (the request log maps domain errors there).
 */
export async function whenCallEnds<R extends UnaryResponse | StreamResponse>(
  call: () => Promise<R>,
  ended: (error: unknown) => void,
  mapError: (error: unknown) => unknown = (error) => error,
): Promise<R> {
  let res: R;
  try {
    res = await call();
  } catch (error) {
    ended(error);
    throw mapError(error);
  }
  if (!res.stream) {
    ended(undefined);
    return res;
  }
  return { ...res, message: new EndReportingStream(res.message[Symbol.asyncIterator](), ended, mapError) };
}

/**
 * The response stream, passed through, reporting its end. A class rather
 * than an async generator declared per call, which made a generator
 * function every call and took every message through one more generator's
 * steps: a cached snapshot is 0.02–0.03 ms faster at p50 with this and
 * string-check.ts's the same way (ADR 0001, fifteenth follow-up; what the
 * young generation promotes did not change).
 */
class EndReportingStream<T> implements AsyncIterableIterator<T> {
  private open = true;

  constructor(
    private readonly inner: AsyncIterator<T>,
    private readonly ended: (error: unknown) => void,
    private readonly mapError: (error: unknown) => unknown,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    let step: IteratorResult<T>;
    try {
      step = await this.inner.next();
    } catch (error) {
      this.end(error);
      throw this.mapError(error);
    }
    if (step.done) this.end(undefined);
    return step;
  }

  /** The consumer stopped before the last message: the client went away. */
  async return(value?: unknown): Promise<IteratorResult<T>> {
    // The CANCELLED error is made only when the stream does close early: an error captures a stack.
    if (this.open) this.end(new ConnectError("stream closed early", Code.Canceled));
    await this.inner.return?.(value);
    return { done: true, value: undefined };
  }

  private end(error: unknown): void {
    if (!this.open) return;
    this.open = false;
    this.ended(error);
  }
}

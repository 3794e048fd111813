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
  const messages = res.message;
  return {
    ...res,
    message: (async function* () {
      // The CANCELLED error is made only when the stream does close early: an error captures a stack.
      let closedEarly = true;
      let failure: unknown;
      try {
        yield* messages;
        closedEarly = false;
      } catch (error) {
        closedEarly = false;
        failure = error;
        throw mapError(error);
      } finally {
        ended(closedEarly ? new ConnectError("stream closed early", Code.Canceled) : failure);
      }
    })(),
  };
}

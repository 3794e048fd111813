import { Code, ConnectError, createContextValues, type ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

/**
 * connect-es reports a request it cannot decode as INTERNAL: "parse binary:
 * premature EOF" (serialization.ts), "received compressed envelope, but do
 * not know how to decompress" (envelope.ts), and the like. These errors are
 * raised while the request is read, before any interceptor sees it, so this
 * is the one place that turns them into what they are: INVALID_ARGUMENT, the
 * caller's bytes are wrong. Each router handler's response is rewritten on
 * its way out: the gRPC trailer, the gRPC-Web trailer frame, or the Connect
 * error body.
 */

/** The statuses connect-es gives a request that does not decode, and the message the caller gets instead. */
const DECODE_ERRORS: readonly { pattern: RegExp; problem: (m: RegExpMatchArray) => string }[] = [
  { pattern: /^parse binary: (.*)$/s, problem: (m) => `could not be decoded as protobuf (${m[1]})` },
  { pattern: /^received compressed envelope, but do not know how to decompress$/, problem: () => "is compressed, but no grpc-encoding was sent" },
  { pattern: /^decompression failed$/, problem: () => "could not be decompressed" },
  { pattern: /^protocol error: promised (\d+) bytes, received (\d+)$/, problem: (m) => `was cut short (${m[2]} of ${m[1]} bytes)` },
  { pattern: /^protocol error: (missing input message|received extra input message) for (unary|server-streaming) method$/, problem: (m) => `has a ${m[1]!.startsWith("missing") ? "missing" : "second"} message` },
];

const GRPC_INTERNAL = "13";
const GRPC_UNIMPLEMENTED = "12";
const GRPC_INVALID_ARGUMENT = "3";
/** Statuses whose message is checked: connect-es uses all three for requests it cannot decode. */
const REWRITTEN = new Set([GRPC_INTERNAL, GRPC_UNIMPLEMENTED, GRPC_INVALID_ARGUMENT]);

/** The message to send instead, when `message` is a decode error; null otherwise. */
export function decodeErrorMessage(message: string): string | null {
  for (const { pattern, problem } of DECODE_ERRORS) {
    const m = message.match(pattern);
    if (m) return `request: ${problem(m)}`;
  }
  return null;
}

/**
 * The same classification for the interceptors (request log, metrics, spans):
 * a decode error of a streaming call's request (read after the interceptors
 * start) is the caller's INVALID_ARGUMENT, never an INTERNAL line. Undefined
 * when `error` is not a decode error.
 */
export function decodeErrorAsInvalidArgument(error: ConnectError): ConnectError | undefined {
  if (![Code.Internal, Code.Unimplemented, Code.InvalidArgument].includes(error.code)) return undefined;
  const replacement = decodeErrorMessage(error.rawMessage);
  return replacement === null ? undefined : new ConnectError(replacement, Code.InvalidArgument);
}

/** Told of each unary call's final status (code 0 for OK), as its caller got it. */
export type UnaryStatusObserver = (req: Parameters<UniversalHandler>[0], method: string, code: number, message: string) => void;

/**
 * Wraps every handler registered so far (call it last in `routes`). A unary
 * call's request is read before any interceptor runs, so one that does not
 * decode never reaches the request log: `onUnaryStatus` sees every unary
 * call's final status, for whoever must account for those.
 */
export function mapDecodeErrors(router: ConnectRouter, onUnaryStatus?: UnaryStatusObserver): void {
  const handlers = router.handlers;
  for (let i = 0; i < handlers.length; i++) handlers[i] = withDecodeErrorsMapped(handlers[i]!, onUnaryStatus);
}

function withDecodeErrorsMapped(handler: UniversalHandler, onUnaryStatus: UnaryStatusObserver | undefined): UniversalHandler {
  const observe = onUnaryStatus && handler.method.methodKind === "unary" ? onUnaryStatus : undefined;
  const method = `${handler.service.typeName}/${handler.method.name}`;
  const wrapped = async (given: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    // The call's context values, here too: the observer asks them whether an interceptor saw the call.
    const req = observe && !given.contextValues ? { ...given, contextValues: createContextValues() } : given;
    const seen = (code: number, message: string) => observe?.(req, method, code, message);
    const res = await handler(req);
    if (res.trailer && res.body) return { ...res, body: fixTrailerAtEnd(res.body, res.trailer, seen) };
    if (res.body && res.status >= 400 && res.header?.get("content-type") === "application/json") {
      return { ...res, ...(await fixConnectError(res.body, res.status, res.header, seen)) };
    }
    if (res.body && res.header?.get("content-type")?.startsWith("application/grpc-web")) {
      return { ...res, body: fixGrpcWebTrailer(res.body, seen) };
    }
    // A Connect unary success (or an error this did not recognise): its HTTP status says which.
    seen(res.status < 400 ? 0 : CONNECT_HTTP_CODES[res.status] ?? Code.Unknown, "");
    return res;
  };
  return Object.assign(wrapped, {
    protocolNames: handler.protocolNames,
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}

type Seen = (code: number, message: string) => void;

/** The HTTP statuses a Connect unary error can have that are not 400 (which several codes share). */
const CONNECT_HTTP_CODES: Record<number, Code> = { 408: Code.DeadlineExceeded, 429: Code.ResourceExhausted, 503: Code.Unavailable, 499: Code.Canceled, 500: Code.Internal, 504: Code.DeadlineExceeded };

/** gRPC: the status is in the trailer, final once the body has ended (and before the adapter writes it). */
async function* fixTrailerAtEnd(body: AsyncIterable<Uint8Array>, trailer: Headers, seen: Seen): AsyncIterable<Uint8Array> {
  yield* body;
  const status = trailer.get("grpc-status");
  const message = safeDecode(trailer.get("grpc-message") ?? "");
  const replacement = status !== null && REWRITTEN.has(status) ? decodeErrorMessage(message) : null;
  if (replacement === null) {
    seen(Number(status ?? 0), message);
    return;
  }
  trailer.set("grpc-status", GRPC_INVALID_ARGUMENT);
  trailer.set("grpc-message", encodeURIComponent(replacement));
  seen(Number(GRPC_INVALID_ARGUMENT), replacement);
}

/** gRPC-Web: the trailer is the last frame of the body (flag 0x80), as HTTP/1-style header lines. */
async function* fixGrpcWebTrailer(body: AsyncIterable<Uint8Array>, seen: Seen): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    if (chunk.length < 5 || (chunk[0]! & 0x80) === 0) {
      yield chunk;
      continue;
    }
    const text = Buffer.from(chunk.subarray(5)).toString("utf8");
    const status = /^grpc-status: *(\d+)\r?$/im.exec(text)?.[1];
    const message = /^grpc-message: *(.*?)\r?$/im.exec(text)?.[1] ?? "";
    const replacement = status !== undefined && REWRITTEN.has(status) ? decodeErrorMessage(safeDecode(message)) : null;
    seen(replacement === null ? Number(status ?? 0) : Number(GRPC_INVALID_ARGUMENT), replacement ?? safeDecode(message));
    if (replacement === null) {
      yield chunk;
      continue;
    }
    const fixed = Buffer.from(`grpc-status: ${GRPC_INVALID_ARGUMENT}\r\ngrpc-message: ${encodeURIComponent(replacement)}\r\n`, "utf8");
    const frame = Buffer.alloc(5 + fixed.length);
    frame[0] = chunk[0]!;
    frame.writeUInt32BE(fixed.length, 1);
    fixed.copy(frame, 5);
    yield frame;
  }
}

/** Connect unary: an HTTP error status with a JSON body {code, message}. */
async function fixConnectError(
  body: AsyncIterable<Uint8Array>,
  status: number,
  header: Headers,
  seen: Seen,
): Promise<{ status: number; body: AsyncIterable<Uint8Array> }> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const same = { status, body: once(bytes) };
  let parsed: { code?: unknown; message?: unknown };
  try {
    parsed = JSON.parse(bytes.toString("utf8")) as typeof parsed;
  } catch {
    seen(CONNECT_HTTP_CODES[status] ?? Code.Unknown, "");
    return same;
  }
  const code = connectCode(String(parsed.code));
  const replacement = ["internal", "unimplemented", "invalid_argument"].includes(String(parsed.code)) ? decodeErrorMessage(String(parsed.message ?? "")) : null;
  seen(replacement === null ? code : Code.InvalidArgument, replacement ?? String(parsed.message ?? ""));
  if (replacement === null) return same;
  const fixed = Buffer.from(JSON.stringify({ code: "invalid_argument", message: replacement }), "utf8");
  header.set("content-length", String(fixed.length));
  return { status: 400, body: once(fixed) };
}

/** "invalid_argument" → Code.InvalidArgument (Connect spells the codes in snake case). */
function connectCode(name: string): Code {
  const key = name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase()).replace("Cancelled", "Canceled");
  return (Code as unknown as Record<string, Code>)[key] ?? Code.Unknown;
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

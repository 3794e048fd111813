import * as http2 from "node:http2";

/**
 * gRPC by hand over node:http2: arbitrary message bytes and framing, for what
 * a well-behaved client library would never send (malformed protobuf, lying
 * length prefixes, the compressed flag without grpc-encoding).
 */

export interface RawAnswer {
  httpStatus: number | undefined;
  /** grpc-status from the trailers (or trailers-only headers); undefined when the stream was reset. */
  grpcStatus: number | undefined;
  grpcMessage: string;
  /** RST_STREAM code when the stream was reset without a status. */
  rstCode: number | undefined;
}

/** A gRPC length-prefixed message: flag byte, 4-byte length, payload. */
export function envelope(payload: Uint8Array, flags = 0, declaredLength = payload.length): Buffer {
  const out = Buffer.alloc(5 + payload.length);
  out[0] = flags;
  out.writeUInt32BE(declaredLength, 1);
  Buffer.from(payload).copy(out, 5);
  return out;
}

/** Protobuf: a length-delimited field. */
export function lengthDelimited(field: number, bytes: Uint8Array): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), Buffer.from(bytes)]);
}

export function varint(value: number): Buffer {
  const out: number[] = [];
  let v = value >>> 0;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

export interface RawCall {
  path: string;
  body: Buffer | ((stream: http2.ClientHttp2Stream) => void);
  headers?: http2.OutgoingHttpHeaders;
}

/** One call on `session` (or a fresh connection to `address`); resolves when the stream closes. */
export function rawCall(target: string | http2.ClientHttp2Session, call: RawCall, timeoutMs = 20_000): Promise<RawAnswer> {
  const session = typeof target === "string" ? http2.connect(`http://${target}`) : target;
  const own = typeof target === "string";
  return new Promise<RawAnswer>((resolve, reject) => {
    const answer: RawAnswer = { httpStatus: undefined, grpcStatus: undefined, grpcMessage: "", rstCode: undefined };
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) answer.grpcStatus = Number(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) answer.grpcMessage = decodeURIComponent(String(h["grpc-message"]));
    };
    session.on("error", () => {});
    const stream = session.request({
      ":method": "POST",
      ":path": call.path,
      "content-type": "application/grpc",
      te: "trailers",
      ...call.headers,
    });
    const timer = setTimeout(() => {
      stream.close();
      reject(new Error(`no answer from ${call.path} within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on("response", (h) => {
      answer.httpStatus = Number(h[":status"]);
      take(h);
    });
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.on("close", () => {
      clearTimeout(timer);
      if (answer.grpcStatus === undefined) answer.rstCode = stream.rstCode;
      if (own) session.close();
      resolve(answer);
    });
    if (typeof call.body === "function") call.body(stream);
    else stream.end(call.body);
  });
}

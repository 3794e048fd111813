import type * as http from "node:http";
import type * as http2 from "node:http2";

/**
 * connect-node percent-encodes `grpc-message` with encodeURIComponent, which
 * also escapes reserved ASCII such as ':' and ','. The gRPC spec encodes only
 * bytes outside 0x20-0x7E and '%', and @grpc/grpc-js decodes with decodeURI,
 * which leaves %3A alone: grpc-js clients saw "beliefs[1].confidence%3A must
 * be…". This re-encodes the header the way the spec says, which every
 * decoder turns back into the original text.
 */

type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;
type NodeHeaders = http.OutgoingHttpHeaders;

export function specEncodeGrpcMessage(value: string): string {
  let text: string;
  try {
    text = decodeURIComponent(value);
  } catch {
    return value;
  }
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function fix(headers: unknown): void {
  if (!headers || typeof headers !== "object" || Array.isArray(headers)) return;
  const h = headers as NodeHeaders;
  const value = h["grpc-message"];
  if (typeof value === "string") h["grpc-message"] = specEncodeGrpcMessage(value);
}

/** Wraps a response so that grpc-message leaves spec-encoded, in headers (trailers-only) and trailers alike. */
export function withSpecGrpcMessage(res: NodeResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => unknown;
  (res as { writeHead: (...args: unknown[]) => unknown }).writeHead = (...args: unknown[]) => {
    for (const arg of args) fix(arg);
    return writeHead(...args);
  };
  const addTrailers = res.addTrailers.bind(res) as (trailers: NodeHeaders) => void;
  res.addTrailers = (trailers: NodeHeaders) => {
    fix(trailers);
    addTrailers(trailers);
  };
}

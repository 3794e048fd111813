import type { HandlerContext } from "@connectrpc/connect";

/**
 * The response content types connect-node sets when it will serialize the
 * replies with toBinary (gRPC, gRPC-Web, Connect unary and streaming). It sets
 * the header from the request's content type before the handler runs, and
 * serializes with the same choice.
 */
const BINARY_REPLY_TYPES: ReadonlySet<string> = new Set([
  "application/grpc+proto",
  "application/grpc-web+proto",
  "application/proto",
  "application/connect+proto",
]);

/**
 * Whether this call's replies are protobuf binary. Pre-encoded fields
 * (pre-encoded.ts) reach only a binary client: the JSON form has no unknown
 * fields, so a JSON reply must be a whole message. Anything else is JSON.
 */
export function repliesInBinary(ctx: HandlerContext): boolean {
  return BINARY_REPLY_TYPES.has(ctx.responseHeader.get("content-type") ?? "");
}

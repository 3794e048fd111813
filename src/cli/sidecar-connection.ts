import { readFile } from "node:fs/promises";
import * as net from "node:net";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Config } from "../config/config.js";
import { UsageError } from "./usage-error.js";

/**
 * How a CLI command reaches a running sidecar (`recall mcp`, `recall import
 * --address/--socket`): gRPC over HTTP/2 to HOST:PORT (https:// for TLS) or
 * through a Unix socket, with the principal's identity headers or a bearer
 * token read from a file.
 */

/** The identity a call carries: the headers as given and, with a token, the bearer token (which the sidecar verifies). */
export function identityHeaders(tenantId: string | undefined, principalId: string | undefined, token: string | undefined): Record<string, string> {
  return {
    ...(tenantId ? { "x-tenant-id": tenantId } : {}),
    ...(principalId ? { "x-principal-id": principalId } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

export async function readToken(path: string): Promise<string> {
  const token = (await readFile(path, "utf8")).trim();
  if (token === "") throw new UsageError(`--token-file ${path} is empty`);
  return token;
}

/** HOST:PORT is plaintext HTTP/2; an https:// address is TLS (a jwt-mode sidecar beyond loopback). */
export function withScheme(address: string): string {
  return /^https?:\/\//.test(address) ? address : `http://${address}`;
}

/** RECALL_HOST:RECALL_PORT, a wildcard host reached through loopback. */
export function defaultAddress(config: Config): string {
  const host = ["0.0.0.0", "::", ""].includes(config.listen.host) ? "127.0.0.1" : config.listen.host;
  return `${host.includes(":") ? `[${host}]` : host}:${config.listen.port}`;
}

/** gRPC over HTTP/2 cleartext, to a TCP address or through a Unix socket. */
export function grpcTransport(baseUrl: string, socketPath?: string): { transport: Transport; close: () => void } {
  const sessions = new Http2SessionManager(baseUrl, undefined, socketPath ? { createConnection: () => net.connect(socketPath) } : undefined);
  return { transport: createGrpcTransport({ baseUrl, sessionManager: sessions }), close: () => sessions.abort() };
}

/** The sidecar `--address` or `--socket` names (default RECALL_HOST:RECALL_PORT). */
export function sidecarTransport(config: Config, target: { address?: string | undefined; socket?: string | undefined }): { transport: Transport; close: () => void } {
  if (target.address !== undefined && target.socket !== undefined) throw new UsageError("--address and --socket exclude each other");
  return target.socket !== undefined ? grpcTransport("http://localhost", target.socket) : grpcTransport(withScheme(target.address ?? defaultAddress(config)));
}

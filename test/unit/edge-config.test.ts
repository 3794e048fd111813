import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { isLoopback } from "../../src/config/edge-config.js";
import { decodeErrorMessage } from "../../src/server/wire/decode-errors.js";
import { spiffeMatcher } from "../../src/server/identity/verified-identity.js";

function problem(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected loadConfig to throw");
}

describe("edge settings", () => {
  it("defaults: 4 MiB requests, 100 streams, 10 s headers, 120 s idle, trusted headers", () => {
    const config = loadConfig({});
    expect(config.limits).toEqual({ readMaxBytes: 4 * 1024 * 1024, maxInflightRequestBytes: 64 * 1024 * 1024, maxConnectionRequestBytes: 16 * 1024 * 1024, maxConcurrentStreams: 100, headersTimeoutMs: 10_000, idleTimeoutMs: 120_000 });
    expect(config.identity).toEqual({ mode: "headers", allowUnverified: false });
    expect(config.tls).toBeNull();
  });

  it("names what each identity mode is missing", () => {
    expect(problem({ RECALL_IDENTITY: "jwt" })).toMatch(/RECALL_JWT_JWKS_FILE \/ RECALL_JWT_SECRET: exactly one[\s\S]*RECALL_JWT_ISSUER[\s\S]*RECALL_JWT_AUDIENCE/);
    expect(problem({ RECALL_IDENTITY: "jwt", RECALL_JWT_SECRET: "x".repeat(32), RECALL_JWT_JWKS_FILE: "/k", RECALL_JWT_ISSUER: "i", RECALL_JWT_AUDIENCE: "a" })).toMatch(
      /exactly one/,
    );
    expect(problem({ RECALL_IDENTITY: "mtls" })).toMatch(/RECALL_TLS_CERT_FILE[\s\S]*RECALL_TLS_KEY_FILE[\s\S]*RECALL_TLS_CLIENT_CA_FILE[\s\S]*RECALL_MTLS_SPIFFE_PATTERN/);
    expect(problem({ RECALL_JWT_SECRET: "short" })).toMatch(/RECALL_JWT_SECRET: must be at least 32 characters/);
    expect(problem({ RECALL_MTLS_SPIFFE_PATTERN: "spiffe://x/{tenant}" })).toMatch(/\{principal\}/);
  });

  it("keeps the JWT secret out of the config's enumerable fields", () => {
    const config = loadConfig({ RECALL_IDENTITY: "jwt", RECALL_JWT_SECRET: "s".repeat(40), RECALL_JWT_ISSUER: "i", RECALL_JWT_AUDIENCE: "a" });
    expect(JSON.stringify(config)).not.toContain("s".repeat(40));
    expect((config.identity as { secret?: string }).secret).toBe("s".repeat(40));
  });

  it("knows loopback", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.5", "recall.svc"]) expect(isLoopback(h)).toBe(false);
  });
});

describe("spiffeMatcher", () => {
  const match = spiffeMatcher("spiffe://example.org/tenant/{tenant}/principal/{principal}");
  it("maps a matching SPIFFE ID, one path segment per placeholder", () => {
    expect(match("spiffe://example.org/tenant/acme/principal/andy")).toEqual({ tenantId: "acme", principalId: "andy" });
    expect(match("spiffe://example.org/tenant/acme/x/principal/andy")).toBeNull();
    expect(match("spiffe://evil.org/tenant/acme/principal/andy")).toBeNull();
    expect(match("spiffe://exampleXorg/tenant/acme/principal/andy")).toBeNull();
  });
});

describe("decodeErrorMessage", () => {
  it("names connect-es's decoding failures as the request's, and leaves others alone", () => {
    expect(decodeErrorMessage("parse binary: premature EOF")).toBe("request: could not be decoded as protobuf (premature EOF)");
    expect(decodeErrorMessage("received compressed envelope, but do not know how to decompress")).toBe("request: is compressed, but no grpc-encoding was sent");
    expect(decodeErrorMessage("internal error")).toBeNull();
  });
});

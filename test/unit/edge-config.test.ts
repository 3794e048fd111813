import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { isLoopback } from "../../src/config/edge-config.js";
import { isAllowedAuthority, isLoopbackName, parseAuthority } from "../../src/config/host-names.js";
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

describe("RECALL_ALLOWED_HOSTS", () => {
  it("checks Host with trusted headers always, in the verified modes only when the list is set", () => {
    expect(loadConfig({}).hostCheck).toEqual({ checkHost: true, allowed: [] });
    const jwt = { RECALL_IDENTITY: "jwt", RECALL_JWT_SECRET: "s".repeat(40), RECALL_JWT_ISSUER: "i", RECALL_JWT_AUDIENCE: "a" };
    expect(loadConfig(jwt).hostCheck).toEqual({ checkHost: false, allowed: [] });
    expect(loadConfig({ ...jwt, RECALL_ALLOWED_HOSTS: "recall.example" }).hostCheck.checkHost).toBe(true);
  });

  it("parses names, host:port, [v6], .domain and * alone; names a bad entry", () => {
    expect(loadConfig({ RECALL_ALLOWED_HOSTS: " Memory.Internal , pinned.example:8443,[fd00::1],.svc.example," }).hostCheck.allowed).toEqual([
      { name: "memory.internal", port: undefined, subdomains: false },
      { name: "pinned.example", port: 8443, subdomains: false },
      { name: "[fd00::1]", port: undefined, subdomains: false },
      { name: "svc.example", port: undefined, subdomains: true },
    ]);
    expect(loadConfig({ RECALL_ALLOWED_HOSTS: "*" }).hostCheck.allowed).toBe("any");
    expect(problem({ RECALL_ALLOWED_HOSTS: "*,memory.internal" })).toMatch(/RECALL_ALLOWED_HOSTS: "\*" \(every host\) must be the only entry/);
    for (const bad of ["http://memory.internal", "memory.internal/x", "a:99999", "*.example.com", "user@host"]) {
      expect(problem({ RECALL_ALLOWED_HOSTS: bad }), bad).toMatch(/^invalid configuration:\n  RECALL_ALLOWED_HOSTS: ".*" is not a host name/);
    }
  });

  it("matches a Host: loopback names always, a listed port only on that port, a .domain below it", () => {
    const allowed = [
      { name: "pinned.example", port: 8443, subdomains: false },
      { name: "svc.example", port: undefined, subdomains: true },
    ];
    const ok = (host: string) => isAllowedAuthority(parseAuthority(host)!, allowed);
    for (const host of ["localhost:1", "a.localhost", "127.8.9.10:5", "[::1]:50051", "pinned.example:8443", "svc.example", "x.y.svc.example:9"]) expect(ok(host), host).toBe(true);
    for (const host of ["pinned.example", "pinned.example:8444", "evilsvc.example", "svc.example.evil", "0.0.0.0:50051", "localhost.evil.example", "[::2]"]) expect(ok(host), host).toBe(false);
    expect(parseAuthority("tmp%2Frecall.sock")).toBeNull();
    expect(parseAuthority("2130706433:1")).toEqual({ name: "127.0.0.1", port: 1 });
    expect(isLoopbackName("localhost")).toBe(true);
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

import { z } from "zod";
import { parseAllowedHosts, type AllowedHosts } from "./host-names.js";

/**
 * The settings of the sidecar's edge: who may call (identity modes, TLS) and
 * what a connection may cost (sizes, streams, timeouts). A fragment of the
 * schema in config/config.ts, which stays the only reader of process.env.
 */

const positiveInt = z.coerce.number().int().positive();
const flag = z.enum(["true", "false"]);

export const edgeEnvSchema = z.object({
  // 4 MiB: the largest legitimate request (1,000 beliefs of 8,000 characters) is about 8 MB only in
  // theory; real batches are a few hundred KB. Larger is refused before it is buffered.
  RECALL_MAX_REQUEST_BYTES: positiveInt.max(256 * 1024 * 1024).default(4 * 1024 * 1024),
  RECALL_MAX_CONCURRENT_STREAMS: positiveInt.max(10_000).default(100),
  // Bytes of requests being read or handled at once (issue 38; defaults measured in docs/failure-behaviour.md).
  RECALL_MAX_INFLIGHT_REQUEST_BYTES: positiveInt.max(4096 * 1024 * 1024).default(64 * 1024 * 1024),
  RECALL_MAX_CONNECTION_REQUEST_BYTES: positiveInt.max(4096 * 1024 * 1024).default(16 * 1024 * 1024),
  RECALL_HEADERS_TIMEOUT_MS: positiveInt.default(10_000),
  RECALL_IDLE_TIMEOUT_MS: positiveInt.default(120_000),
  RECALL_IDENTITY: z.enum(["headers", "jwt", "mtls"]).default("headers"),
  // Names besides loopback that requests may be addressed to (Host) and sent from (Origin): docs/identity-and-deployment.md.
  RECALL_ALLOWED_HOSTS: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseAllowedHosts(text);
      if ("hosts" in parsed) return parsed.hosts;
      ctx.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    })
    .optional(),
  RECALL_ALLOW_UNVERIFIED_IDENTITY: flag.default("false"),
  RECALL_JWT_JWKS_FILE: z.string().min(1).optional(),
  // HS256 wants at least 256 bits of key.
  RECALL_JWT_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  RECALL_JWT_ISSUER: z.string().min(1).optional(),
  RECALL_JWT_AUDIENCE: z.string().min(1).optional(),
  RECALL_JWT_TENANT_CLAIM: z.string().min(1).default("tenant_id"),
  RECALL_JWT_PRINCIPAL_CLAIM: z.string().min(1).default("sub"),
  RECALL_TLS_CERT_FILE: z.string().min(1).optional(),
  RECALL_TLS_KEY_FILE: z.string().min(1).optional(),
  RECALL_TLS_CLIENT_CA_FILE: z.string().min(1).optional(),
  RECALL_MTLS_SPIFFE_PATTERN: z
    .string()
    .regex(/^spiffe:\/\/[^/{}]+\/.*\{tenant\}.*$/, 'must look like "spiffe://TRUST_DOMAIN/…{tenant}…{principal}"')
    .refine((p) => p.includes("{principal}"), 'must contain "{principal}"')
    .optional(),
});

type EdgeEnv = z.infer<typeof edgeEnvSchema>;

export interface EdgeLimits {
  /** Largest request message, checked from the frame header before the message is read. */
  readonly readMaxBytes: number;
  /** Bytes of requests in flight in the whole process; beyond it a call fails RESOURCE_EXHAUSTED unread. */
  readonly maxInflightRequestBytes: number;
  /** The same bound for one connection. */
  readonly maxConnectionRequestBytes: number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS per connection. */
  readonly maxConcurrentStreams: number;
  /** A connection must send its first request's headers within this. */
  readonly headersTimeoutMs: number;
  /** A connection with no call in flight is closed after this. */
  readonly idleTimeoutMs: number;
}

/**
 * Which names a request on the TCP port may carry (Host / :authority, and
 * Origin when a browser sends one); the Unix socket is never checked.
 */
export interface HostCheck {
  /** Host checked: always with trusted headers; in jwt and mtls mode only when RECALL_ALLOWED_HOSTS is set. */
  readonly checkHost: boolean;
  /** Besides loopback (RECALL_ALLOWED_HOSTS); "any" turns both checks off. */
  readonly allowed: AllowedHosts;
}

export function edgeHostCheck(e: EdgeEnv): HostCheck {
  return Object.freeze({ checkHost: e.RECALL_IDENTITY === "headers" || e.RECALL_ALLOWED_HOSTS !== undefined, allowed: e.RECALL_ALLOWED_HOSTS ?? [] });
}

export type IdentityConfig =
  | { readonly mode: "headers"; readonly allowUnverified: boolean }
  | {
      readonly mode: "jwt";
      readonly jwksFile: string | undefined;
      /** Not enumerable: never in a log line. */
      readonly secret: string | undefined;
      readonly issuer: string;
      readonly audience: string;
      readonly tenantClaim: string;
      readonly principalClaim: string;
    }
  | { readonly mode: "mtls"; readonly spiffePattern: string };

export interface TlsConfig {
  readonly certFile: string;
  readonly keyFile: string;
  /** Set in mTLS mode: client certificates are requested and verified against it. */
  readonly clientCaFile: string | undefined;
}

export function edgeLimits(e: EdgeEnv): EdgeLimits {
  return Object.freeze({
    readMaxBytes: e.RECALL_MAX_REQUEST_BYTES,
    maxInflightRequestBytes: e.RECALL_MAX_INFLIGHT_REQUEST_BYTES,
    maxConnectionRequestBytes: e.RECALL_MAX_CONNECTION_REQUEST_BYTES,
    maxConcurrentStreams: e.RECALL_MAX_CONCURRENT_STREAMS,
    headersTimeoutMs: e.RECALL_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: e.RECALL_IDLE_TIMEOUT_MS,
  });
}

/** Identity and TLS settings, or the list of what is missing for the chosen mode. */
export function edgeIdentity(e: EdgeEnv): { identity: IdentityConfig; tls: TlsConfig | null } | { problems: string[] } {
  const problems: string[] = [];
  const need = (name: keyof EdgeEnv, why: string) => {
    if (e[name] === undefined) problems.push(`${name}: required ${why}`);
  };
  if (e.RECALL_TLS_CERT_FILE !== undefined || e.RECALL_TLS_KEY_FILE !== undefined || e.RECALL_IDENTITY === "mtls") {
    need("RECALL_TLS_CERT_FILE", "with TLS");
    need("RECALL_TLS_KEY_FILE", "with TLS");
  }
  let identity: IdentityConfig;
  switch (e.RECALL_IDENTITY) {
    case "headers":
      identity = { mode: "headers", allowUnverified: e.RECALL_ALLOW_UNVERIFIED_IDENTITY === "true" };
      break;
    case "jwt":
      if ((e.RECALL_JWT_JWKS_FILE === undefined) === (e.RECALL_JWT_SECRET === undefined)) {
        problems.push("RECALL_JWT_JWKS_FILE / RECALL_JWT_SECRET: exactly one is required when RECALL_IDENTITY=jwt");
      }
      need("RECALL_JWT_ISSUER", "when RECALL_IDENTITY=jwt");
      need("RECALL_JWT_AUDIENCE", "when RECALL_IDENTITY=jwt");
      identity = {
        mode: "jwt",
        jwksFile: e.RECALL_JWT_JWKS_FILE,
        issuer: e.RECALL_JWT_ISSUER ?? "",
        audience: e.RECALL_JWT_AUDIENCE ?? "",
        tenantClaim: e.RECALL_JWT_TENANT_CLAIM,
        principalClaim: e.RECALL_JWT_PRINCIPAL_CLAIM,
      } as IdentityConfig;
      Object.defineProperty(identity, "secret", { value: e.RECALL_JWT_SECRET, enumerable: false });
      break;
    case "mtls":
      need("RECALL_TLS_CLIENT_CA_FILE", "when RECALL_IDENTITY=mtls");
      need("RECALL_MTLS_SPIFFE_PATTERN", "when RECALL_IDENTITY=mtls");
      identity = { mode: "mtls", spiffePattern: e.RECALL_MTLS_SPIFFE_PATTERN ?? "" };
      break;
  }
  if (problems.length > 0) return { problems };
  const tls =
    e.RECALL_TLS_CERT_FILE && e.RECALL_TLS_KEY_FILE
      ? Object.freeze({
          certFile: e.RECALL_TLS_CERT_FILE,
          keyFile: e.RECALL_TLS_KEY_FILE,
          clientCaFile: e.RECALL_IDENTITY === "mtls" ? e.RECALL_TLS_CLIENT_CA_FILE : undefined,
        })
      : null;
  return { identity: Object.freeze(identity), tls };
}

/** 127.0.0.0/8, ::1 and localhost: only processes on this host (or pod) can reach them. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

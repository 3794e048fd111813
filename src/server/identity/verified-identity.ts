import type * as http from "node:http";
import type * as http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import { Code, ConnectError, createContextKey, createContextValues, type ContextValues } from "@connectrpc/connect";
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import type { Principal } from "../../domain/model.js";
import { assertHeadersAgree, IDENTIFIER, type PrincipalSource } from "./identity.js";

/**
 * Verified identity for callers beyond loopback: a bearer token (JWT, checked
 * with jose against a JWKS or a shared secret) or the client certificate of
 * an mTLS connection (its SPIFFE URI SAN, mapped by a pattern). Either way
 * the x-tenant-id / x-principal-id headers, if sent, must agree.
 */

export interface JwtSettings {
  readonly jwks?: JSONWebKeySet;
  readonly secret?: string;
  readonly issuer: string;
  readonly audience: string;
  readonly tenantClaim: string;
  readonly principalClaim: string;
}

/** Asymmetric algorithms for JWKS keys; HMAC only with the shared secret (never a public key used as a MAC key). */
const JWKS_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
const SECRET_ALGORITHMS = ["HS256", "HS384", "HS512"];

export function jwtSource(settings: JwtSettings): PrincipalSource {
  const verify = (token: string) => {
    const options = { issuer: settings.issuer, audience: settings.audience, requiredClaims: ["exp"] };
    return settings.jwks
      ? jwtVerify(token, createLocalJWKSet(settings.jwks), { ...options, algorithms: JWKS_ALGORITHMS })
      : jwtVerify(token, new TextEncoder().encode(settings.secret ?? ""), { ...options, algorithms: SECRET_ALGORITHMS });
  };
  return async ({ header }) => {
    const authorization = header.get("authorization");
    const token = authorization?.match(/^Bearer +([^ ]+)$/i)?.[1];
    if (!token) throw new ConnectError("missing metadata authorization: Bearer <token>", Code.Unauthenticated);
    let payload: JWTPayload;
    try {
      ({ payload } = await verify(token));
    } catch (error) {
      throw new ConnectError(`bearer token rejected: ${tokenProblem(error)}`, Code.Unauthenticated);
    }
    const principal = {
      tenantId: claim(payload, settings.tenantClaim),
      principalId: claim(payload, settings.principalClaim),
    };
    assertHeadersAgree(header, principal);
    return principal;
  };
}

function claim(payload: JWTPayload, name: string): string {
  const value = payload[name];
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw new ConnectError(`bearer token rejected: claim ${name} must be 1-200 visible ASCII characters`, Code.Unauthenticated);
  }
  return value;
}

/** jose's error, named without echoing the token. */
function tokenProblem(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} ${error.reason === "check_failed" ? "does not match" : error.reason}`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "signature does not verify";
  if (error instanceof joseErrors.JOSEError) return error.code;
  return "malformed";
}

/** The client certificate of the call's connection, put into the context by the Node adapter. */
interface PeerCertificate {
  /** Whether the certificate chains to the configured client CA. */
  readonly authorized: boolean;
  /** The certificate's URI subject alternative names. */
  readonly uris: readonly string[];
}

const peerKey = createContextKey<PeerCertificate | undefined>(undefined, { description: "mTLS client certificate" });

/** For connectNodeAdapter's `contextValues`: what the TLS socket says about the client. */
export function peerContextValues(req: http.IncomingMessage | http2.Http2ServerRequest): ContextValues {
  const values = createContextValues();
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== "function") return values;
  const cert = socket.getPeerCertificate();
  const uris = (cert?.subjectaltname ?? "")
    .split(/, */)
    .filter((entry) => entry.startsWith("URI:"))
    .map((entry) => entry.slice(4));
  return values.set(peerKey, { authorized: socket.authorized === true, uris });
}

/**
 * The SPIFFE ID pattern, e.g. "spiffe://example.org/tenant/{tenant}/principal/{principal}":
 * everything but the two placeholders must match exactly; each placeholder is one path segment.
 */
export function spiffeMatcher(pattern: string): (uri: string) => Principal | null {
  const names: ("tenant" | "principal")[] = [];
  const source = pattern.replace(/\{(tenant|principal)\}|[.*+?^${}()|[\]\\]/g, (m, name: "tenant" | "principal" | undefined) => {
    if (!name) return `\\${m}`;
    names.push(name);
    return "([^/]+)";
  });
  const regex = new RegExp(`^${source}$`);
  return (uri) => {
    const m = regex.exec(uri);
    if (!m) return null;
    const principal = { tenantId: m[names.indexOf("tenant") + 1]!, principalId: m[names.indexOf("principal") + 1]! };
    return IDENTIFIER.test(principal.tenantId) && IDENTIFIER.test(principal.principalId) ? principal : null;
  };
}

export function mtlsSource(spiffePattern: string): PrincipalSource {
  const match = spiffeMatcher(spiffePattern);
  return async ({ header, contextValues }) => {
    const peer = contextValues.get(peerKey);
    if (!peer?.authorized) throw new ConnectError("no client certificate signed by the configured client CA", Code.Unauthenticated);
    const principal = peer.uris.map(match).find((p) => p !== null);
    if (!principal) throw new ConnectError("client certificate has no SPIFFE ID matching RECALL_MTLS_SPIFFE_PATTERN", Code.Unauthenticated);
    assertHeadersAgree(header, principal);
    return principal;
  };
}

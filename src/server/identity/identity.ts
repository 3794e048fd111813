import { Code, ConnectError, createContextKey, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { PermissionDeniedError } from "../../domain/errors.js";
import type { Principal } from "../../domain/model.js";

/**
 * Tenant and principal come from one verified source and nowhere else: the
 * `x-tenant-id` / `x-principal-id` metadata as sent (trusted-header mode, for
 * a caller on loopback or the Unix socket), or a verified bearer token or
 * client certificate (server/identity/verified-identity.ts). They are the only source
 * of the isolation predicates.
 */

export const TENANT_HEADER = "x-tenant-id";
export const PRINCIPAL_HEADER = "x-principal-id";

const principalKey = createContextKey<Principal | undefined>(undefined, { description: "authenticated principal" });

/** Services that need no identity (health and reflection are for infrastructure). */
const ANONYMOUS_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export const IDENTIFIER = /^[\x21-\x7e]{1,200}$/;

/** Resolves the caller of one call; throws a ConnectError (UNAUTHENTICATED, PERMISSION_DENIED) when it cannot. */
export type PrincipalSource = (call: { header: Headers; contextValues: ContextValues }) => Promise<Principal>;

export function identityInterceptor(source: PrincipalSource = trustedHeaders): Interceptor {
  return (next) => async (req) => {
    if (ANONYMOUS_SERVICES.has(req.service.typeName)) return next(req);
    req.contextValues.set(principalKey, await source(req));
    return next(req);
  };
}

/** Trusted-header mode: the metadata as sent. */
export const trustedHeaders: PrincipalSource = async ({ header }) => ({
  tenantId: readIdentifier(header, TENANT_HEADER),
  principalId: readIdentifier(header, PRINCIPAL_HEADER),
});

function readIdentifier(header: Headers, name: string): string {
  const value = header.get(name);
  if (value === null || value === "") throw new ConnectError(`missing metadata ${name}`, Code.Unauthenticated);
  if (!IDENTIFIER.test(value)) {
    throw new ConnectError(`metadata ${name} must be 1-200 visible ASCII characters`, Code.Unauthenticated);
  }
  return value;
}

/** The caller's principal once the interceptor has run, for the call's log line and span; undefined before or for anonymous services. */
export function callerOf(values: ContextValues): Principal | undefined {
  return values.get(principalKey);
}

/** With a verified identity the headers are optional; sent, they must name the same caller. */
export function assertHeadersAgree(header: Headers, verified: Principal): void {
  for (const [name, value] of [
    [TENANT_HEADER, verified.tenantId],
    [PRINCIPAL_HEADER, verified.principalId],
  ] as const) {
    const sent = header.get(name);
    if (sent !== null && sent !== value) {
      throw new ConnectError(`metadata ${name} does not match the verified identity`, Code.PermissionDenied);
    }
  }
}

/** The caller's principal; the interceptor guarantees it for memory services. */
export function principalOf(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (!principal) throw new ConnectError("no authenticated principal", Code.Unauthenticated);
  return principal;
}

/** A request body may repeat the caller's identity, never name another one. */
export function assertSameIdentity(principal: Principal, body: { tenantId: string; principalId: string }): void {
  if (body.tenantId !== "" && body.tenantId !== principal.tenantId) {
    throw new PermissionDeniedError("query.tenant_id does not match the authenticated tenant");
  }
  if (body.principalId !== "" && body.principalId !== principal.principalId) {
    throw new PermissionDeniedError("query.principal_id does not match the authenticated principal");
  }
}

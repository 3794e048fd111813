import { Code, ConnectError, createContextKey, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { PermissionDeniedError } from "../domain/errors.js";
import type { Principal } from "../domain/model.js";

/**
 * Tenant and principal come from call metadata and nowhere else. For a local
 * sidecar the runtime sets `x-tenant-id` and `x-principal-id`; in a mesh the
 * proxy that authenticated the caller sets them. They are the only source of
 * the isolation predicates.
 */

export const TENANT_HEADER = "x-tenant-id";
export const PRINCIPAL_HEADER = "x-principal-id";

const principalKey = createContextKey<Principal | undefined>(undefined, { description: "authenticated principal" });

/** Services that need no identity (health and reflection are for infrastructure). */
const ANONYMOUS_SERVICES = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

const IDENTIFIER = /^[\x21-\x7e]{1,200}$/;

export function identityInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (ANONYMOUS_SERVICES.has(req.service.typeName)) return next(req);
    const tenantId = readIdentifier(req.header, TENANT_HEADER);
    const principalId = readIdentifier(req.header, PRINCIPAL_HEADER);
    req.contextValues.set(principalKey, { tenantId, principalId });
    return next(req);
  };
}

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

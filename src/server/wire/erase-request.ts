import { InvalidArgumentError, PermissionDeniedError } from "../../domain/errors.js";
import type { Principal } from "../../domain/model.js";
import type { ErasePrincipalRequest } from "../../gen/memory/v1/write_service_pb.js";

/**
 * ErasePrincipal repeats the caller's identity as a confirmation: an erase
 * is irreversible, so a client whose metadata names someone else by mistake
 * is refused instead of obeyed. The principal erased is always the caller.
 */
export function confirmedErasure(req: ErasePrincipalRequest, caller: Principal): Principal {
  if (req.tenantId === "") throw new InvalidArgumentError("tenant_id", "is required (the caller's own tenant, as a confirmation)");
  if (req.principalId === "") throw new InvalidArgumentError("principal_id", "is required (the caller's own principal, as a confirmation)");
  if (req.tenantId !== caller.tenantId) throw new PermissionDeniedError("tenant_id does not match the authenticated tenant");
  if (req.principalId !== caller.principalId) throw new PermissionDeniedError("principal_id does not match the authenticated principal");
  return caller;
}

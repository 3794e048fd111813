import type { Principal } from "./model.js";

/** One string per principal, for maps keyed by principal: JSON, so no tenant or principal id can run into the other. */
export function principalKey(p: Principal): string {
  return JSON.stringify([p.tenantId, p.principalId]);
}

/** The principal a principalKey was made from. */
export function principalOfKey(key: string): Principal {
  const [tenantId, principalId] = JSON.parse(key) as [string, string];
  return { tenantId, principalId };
}

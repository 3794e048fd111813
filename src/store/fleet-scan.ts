/**
 * Statements that read across tenants on purpose: maintenance finding which
 * tenants have work due (the trace sweeps, the background embedder). Every
 * other statement the store issues on a tenant table filters on
 * `tenant_id = $n`, so that Citus routes it to one shard group
 * (docs/scale-out.md); these fan out to every shard, read-only, once per
 * maintenance run. Naming them here is what lets the statement-routing test
 * (test/store/statement-routing.test.ts) tell them from a forgotten predicate:
 * it still requires them to be plain reads whose joins are on tenant_id.
 */
const registered = new Set<string>();

/** Declares `text` a fleet scan; returns it unchanged. */
export function fleetScan(text: string): string {
  registered.add(text);
  return text;
}

export function isFleetScan(text: string): boolean {
  return registered.has(text);
}

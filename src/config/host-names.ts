/**
 * The names the sidecar may be addressed by (Host, :authority, Origin), as
 * pure functions: loopback names always, and the operator's list
 * (RECALL_ALLOWED_HOSTS). A web page can point its own name at 127.0.0.1
 * (DNS rebinding), so the address a connection arrived on proves nothing;
 * the name the browser thinks it is talking to does.
 */

/** One entry of RECALL_ALLOWED_HOSTS: a host name or IP, with a port when the entry named one. */
export interface AllowedHost {
  /** Lower case; an IPv6 address in brackets, as in a Host header. */
  readonly name: string;
  /** Undefined: any port. */
  readonly port: number | undefined;
  /** A leading dot (`.example.com`, as Vite's allowedHosts): the name and every name under it. */
  readonly subdomains: boolean;
}

/** RECALL_ALLOWED_HOSTS: the names besides loopback, or "any" (`*`: no Host or Origin check at all). */
export type AllowedHosts = readonly AllowedHost[] | "any";

/**
 * `host`, `host:port`, `[v6]` or `[v6]:port` as a Host header carries it, or
 * null when it is not one (a path, user info, a bad port). The name is
 * normalised as browsers do (lower case, IPv4 in dotted form).
 */
export function parseAuthority(text: string): { name: string; port: number | undefined } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/?#@\\\s]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) return null;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && port > 65535) return null;
  let url: URL;
  try {
    url = new URL(`http://${match[1]}`);
  } catch {
    return null;
  }
  return { name: url.hostname.replace(/\.$/, ""), port };
}

/**
 * localhost and its subdomains (RFC 6761: they never leave the host), 127.0.0.0/8 and [::1].
 * Not 0.0.0.0: a page on any site could once reach a local server through it.
 */
export function isLoopbackName(name: string): boolean {
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Whether an authority names this sidecar: loopback, or an entry of the list. */
export function isAllowedAuthority(authority: { name: string; port: number | undefined }, allowed: AllowedHosts): boolean {
  return isLoopbackName(authority.name) || isListed(authority, allowed);
}

/** Whether an entry of the list names the authority (its port too, when the entry has one). */
export function isListed(authority: { name: string; port: number | undefined }, allowed: AllowedHosts): boolean {
  if (allowed === "any") return true;
  return allowed.some(
    (entry) =>
      (entry.name === authority.name || (entry.subdomains && authority.name.endsWith(`.${entry.name}`))) &&
      (entry.port === undefined || entry.port === authority.port),
  );
}

/** RECALL_ALLOWED_HOSTS parsed: a comma-separated list, or `*` alone; the bad entries named. */
export function parseAllowedHosts(text: string): { hosts: AllowedHosts } | { problem: string } {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.includes("*")) {
    return entries.length === 1 ? { hosts: "any" } : { problem: '"*" (every host) must be the only entry' };
  }
  const hosts: AllowedHost[] = [];
  for (const entry of entries) {
    const subdomains = entry.startsWith(".");
    const parsed = entry.includes("*") ? null : parseAuthority(subdomains ? entry.slice(1) : entry);
    if (!parsed) return { problem: `"${entry}" is not a host name, IP address, host:port or .domain (no scheme, no path, no * inside)` };
    hosts.push(Object.freeze({ ...parsed, subdomains }));
  }
  return { hosts: Object.freeze(hosts) };
}

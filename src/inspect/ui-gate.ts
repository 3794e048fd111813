import { randomBytes, timingSafeEqual } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Principal } from "../domain/model.js";
import { assertHeadersAgree, IDENTIFIER, type PrincipalSource } from "../server/identity/identity.js";

/**
 * Who may open the inspector page in the trusted-headers mode, as Jupyter
 * does it: a random token made at each start and printed once; the browser
 * trades it (with the principal to inspect) at /ui/login for a session
 * cookie (HttpOnly, SameSite=Strict) and is redirected, so the token leaves
 * the address bar. The cookie names one principal: the page's RPCs are that
 * principal's, whatever headers a page might send. In the verified modes
 * (jwt, mtls) there is no gate: the page sends the user's own credentials.
 */

/**
 * The session cookie's name. Cookies ignore ports, so one name would be
 * shared (and overwritten) by every sidecar on the host: it names the port.
 * Under TLS it is `__Host-` prefixed: only a secure origin can set it, for
 * this host alone (Secure, Path=/, no Domain).
 */
export function uiCookieName(port: number, secure: boolean): string {
  return `${secure ? "__Host-" : ""}recall_ui_${port}`;
}
/** Sessions kept at once; the oldest goes first (a page left open elsewhere logs in again). */
const MAX_SESSIONS = 100;

export class UiGate {
  /** The per-start token (base64url, 256 bits). */
  readonly token = randomBytes(32).toString("base64url");
  private readonly sessions = new Map<string, Principal>();
  private cookie: string | undefined;

  /** The session cookie's name once the port is bound (bind); undefined before: no cookie is read or set. */
  get cookieName(): string | undefined {
    return this.cookie;
  }

  bind(port: number, secure: boolean): void {
    this.cookie = uiCookieName(port, secure);
  }

  /** The token, checked in constant time. */
  accepts(token: string | null): boolean {
    if (token === null) return false;
    const given = Buffer.from(token);
    const expected = Buffer.from(this.token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** A new session for `principal`; returns the cookie value. */
  open(principal: Principal): string {
    const id = randomBytes(32).toString("base64url");
    this.sessions.set(id, principal);
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return id;
  }

  /** The principal of the request's session cookie; null without a cookie, undefined for an unknown one. */
  principalOf(cookieHeader: string | null | undefined): Principal | null | undefined {
    const id = this.cookie === undefined ? null : cookieValue(cookieHeader, this.cookie);
    return id === null ? null : this.sessions.get(id);
  }

  /**
   * The identity source with the page's sessions in front: a call carrying
   * the cookie is its session's principal (headers, if sent, must agree);
   * any other call goes to `inner` as before.
   */
  identitySource(inner: PrincipalSource): PrincipalSource {
    return async (call) => {
      const principal = this.principalOf(call.header.get("cookie"));
      if (principal === null) return inner(call);
      if (principal === undefined) {
        throw new ConnectError("the inspector session is unknown (the sidecar restarted?): open the address it printed", Code.Unauthenticated);
      }
      assertHeadersAgree(call.header, principal);
      return principal;
    };
  }
}

/** The principal named by a login request, or null when either part is missing or malformed. */
export function loginPrincipal(query: URLSearchParams): Principal | null {
  const tenantId = query.get("tenant") ?? "";
  const principalId = query.get("principal") ?? "";
  return IDENTIFIER.test(tenantId) && IDENTIFIER.test(principalId) ? { tenantId, principalId } : null;
}

export function cookieValue(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

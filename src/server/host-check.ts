import type * as http from "node:http";
import type * as http2 from "node:http2";
import type { HostCheck } from "../config/edge-config.js";
import { isAllowedAuthority, isListed, parseAuthority } from "../config/host-names.js";
import type { Logger } from "../log/logger.js";
import { protocolOf } from "./grpc-cutoff.js";
import { viaSocketFile } from "./listen.js";

/**
 * The Host and Origin check in front of everything on the TCP port (RPCs of
 * every protocol, /mcp, /ui/, /metrics), as Jupyter, Vite's allowedHosts and
 * the MCP SDK do it. A web page can point its own name at 127.0.0.1 (DNS
 * rebinding) and then call the sidecar as "same origin", with any trusted
 * headers it likes; the name in its Host header gives it away. A page on
 * another origin gives itself away by its Origin header.
 *
 * - Host / :authority must be a loopback name or one of RECALL_ALLOWED_HOSTS
 *   (always with trusted headers; in jwt and mtls mode only when the list is
 *   set: a browser never sends a bearer token by itself, and a rebound name
 *   fails TLS verification).
 * - Origin, when present, must be the request's own origin (this port's
 *   scheme, the Host's name and port) or name an entry of RECALL_ALLOWED_HOSTS;
 *   `null` (a sandboxed frame, a file) is refused. In every mode.
 *
 * Refused: 403 with a Connect error body (Connect, gRPC-Web, plain HTTP), or
 * PERMISSION_DENIED for gRPC, with a message naming the name and the setting.
 * The Unix socket is not checked: no browser can reach it, and grpc-python
 * sends the socket's path as the authority. (An authority that is no URL
 * host at all has been replaced by "localhost" before this runs, by
 * request-authority.ts; a browser always sends the name it resolved.)
 */

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** Distinct refusals logged (then silent: a page retrying must not flood the log). */
const LOGGED_MAX = 100;

export function withHostCheck(check: HostCheck, options: { secure: boolean; logger: Logger }, handler: Handler): Handler {
  if (check.allowed === "any") return handler;
  const logged = new Set<string>();
  return (req, res) => {
    const refusal = viaSocketFile(req) ? null : hostRefusal(req, check, options.secure);
    if (!refusal) return handler(req, res);
    if (logged.size < LOGGED_MAX && !logged.has(refusal.key)) {
      logged.add(refusal.key);
      options.logger.warn({ [refusal.header]: refusal.value, path: (req.url ?? "").split("?")[0] }, `request refused: ${refusal.message}`);
    }
    refuse(req, res, refusal.message);
  };
}

interface Refusal {
  header: "host" | "origin";
  value: string;
  key: string;
  message: string;
}

/** Why a TCP request is refused, or null when its Host and Origin are this sidecar's. */
export function hostRefusal(req: Request, check: HostCheck, secure: boolean): Refusal | null {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const raw = headers[":authority"] ?? headers.host;
  const hostText = typeof raw === "string" ? raw : "";
  const host = parsedAuthority(hostText);
  if (check.checkHost && (!host || !isAllowedAuthority(host, check.allowed))) {
    const shown = printable(hostText);
    return {
      header: "host",
      value: shown,
      key: `host ${host?.name ?? shown}`,
      message:
        `Host "${shown}" is not a loopback name (localhost, 127.0.0.1, [::1]) or one of RECALL_ALLOWED_HOSTS: ` +
        `a web page may have pointed its name at this address (DNS rebinding). To call the sidecar by this name, add ${host ? host.name : "it"} to RECALL_ALLOWED_HOSTS`,
    };
  }
  const origin = headers.origin;
  if (typeof origin !== "string") return null;
  const from = originAuthority(origin);
  const own = host && { scheme: secure ? "https:" : "http:", name: host.name, port: host.port ?? (secure ? 443 : 80) };
  const sameOrigin = from && own && from.scheme === own.scheme && from.name === own.name && from.port === own.port;
  // A listed name may sit behind a proxy that ends TLS: its scheme is not ours to know.
  if (sameOrigin || (from && isListed(from, check.allowed))) return null;
  const shown = printable(origin);
  return {
    header: "origin",
    value: shown,
    key: `origin ${shown}`,
    message:
      `Origin "${shown}" is not this sidecar's: a page on another site may not call it. ` +
      `To let pages served under another name call it, add that name to RECALL_ALLOWED_HOSTS`,
  };
}

/** Parsed authorities by text: a client sends the same one with every call (the parse is most of the check's 2.5 µs). */
const authorities = new Map<string, ReturnType<typeof parseAuthority>>();
const AUTHORITIES_MAX = 256;

function parsedAuthority(text: string): ReturnType<typeof parseAuthority> {
  let parsed = authorities.get(text);
  if (parsed === undefined && !authorities.has(text)) {
    parsed = parseAuthority(text);
    if (authorities.size >= AUTHORITIES_MAX) authorities.clear();
    authorities.set(text, parsed);
  }
  return parsed ?? null;
}

/** An Origin's name and port (the scheme's default when none is written); null for "null" and anything not http(s). */
function originAuthority(origin: string): { scheme: string; name: string; port: number } | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return { scheme: url.protocol, name: url.hostname.replace(/\.$/, ""), port: url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80 };
}

/** At most 200 visible characters of a header, for a message and a log line. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}

/** 403 in Connect's words (gRPC-Web and HTTP clients map 403 to PERMISSION_DENIED), or gRPC status 7 in trailers. */
function refuse(req: Request, res: Response, message: string): void {
  if (protocolOf(String(req.headers["content-type"] ?? "")) === "grpc") {
    res.writeHead(200, { "content-type": "application/grpc" });
    res.addTrailers({ "grpc-status": "7", "grpc-message": encodeURIComponent(message) });
    res.end();
    return;
  }
  res.writeHead(403, {
    "content-type": "application/json",
    "cache-control": "no-store",
    // Read by gRPC-Web clients from a response without a body.
    "grpc-status": "7",
    "grpc-message": encodeURIComponent(message),
  });
  res.end(JSON.stringify({ code: "permission_denied", message }));
}

/** Said once at start where the check may surprise: `*` (no check at all), or trusted headers bound beyond loopback. */
export function announceHostCheck(check: HostCheck, listen: { host: string; mode: string }, logger: Logger): void {
  if (check.allowed === "any") {
    logger.warn(
      "RECALL_ALLOWED_HOSTS=*: Host and Origin are NOT checked; any web page that points its name at this address can call the sidecar" +
        (listen.mode === "headers" ? " with trusted identity headers, reading and erasing memory" : ""),
    );
  } else if (check.checkHost && check.allowed.length === 0 && !isAllowedAuthority({ name: listen.host.includes(":") ? `[${listen.host}]` : listen.host, port: undefined }, [])) {
    logger.warn({ host: listen.host }, "requests on the TCP port must name a loopback host (Host header); set RECALL_ALLOWED_HOSTS to the names callers use");
  }
}

import { readFileSync } from "node:fs";
import type * as http from "node:http";
import type * as http2 from "node:http2";
import { ConfigError } from "../config/config.js";
import { UiGate, loginPrincipal } from "./ui-gate.js";

/**
 * The memory inspector's HTTP side (RECALL_UI=on): the page's static files
 * under /ui/ on the RPC port, and the token exchange of the trusted-headers
 * mode (inspect/ui-gate.ts). The page calls the sidecar's own RPCs through
 * Connect on the same origin; nothing here reads memory.
 *
 * Every /ui/ response forbids what the page does not need: a strict
 * Content-Security-Policy (own scripts, styles and calls only; no inline
 * script), no caching, no referrer, no framing.
 */

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
export type Handler = (req: Request, res: Response) => void;

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** The built page (`npm run build` writes it to dist/ui/), by path under /ui/. */
const ASSETS: Record<string, string> = {
  "": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};
const FILE_OF: Record<string, string> = { "": "index.html", "app.js": "app.js", "app.css": "app.css" };

export interface InspectorPage {
  /** Set in the trusted-headers mode: the token gate; undefined in the verified modes. */
  readonly gate: UiGate | undefined;
  /** The RPC handler with the page in front of it. */
  wrap(rpc: Handler): Handler;
  /** Once the port is bound: it names the session cookie. */
  listening(port: number): void;
  /** The address to print: with the login token in the trusted-headers mode. */
  address(base: string, principal?: { tenantId: string; principalId: string }): string;
}

export function inspectorPage(options: { gated: boolean; secure: boolean; assetsDir?: URL }): InspectorPage {
  const dir = options.assetsDir ?? new URL("../ui/", import.meta.url);
  const files = new Map<string, Buffer>();
  for (const [path, file] of Object.entries(FILE_OF)) {
    try {
      files.set(path, readFileSync(new URL(file, dir)));
    } catch {
      throw new ConfigError(`RECALL_UI=on: the inspector page is not built (${new URL(file, dir).pathname} is missing): run npm run build`);
    }
  }
  const gate = options.gated ? new UiGate() : undefined;

  const send = (res: Response, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, ...extra });
    res.end(body);
  };
  const page = (res: Response, status: number, title: string, body: string, extra: Record<string, string> = {}) =>
    send(
      res,
      status,
      ASSETS[""]!,
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><link rel="stylesheet" href="/ui/app.css"></head><body class="plain"><main><h1>${title}</h1>${body}</main></body></html>`,
      extra,
    );
  const refuse = (res: Response) =>
    page(
      res,
      403,
      "Refused: the inspector needs its token",
      "<p>Open the address the sidecar printed when it started (it carries a token made for that start), or run <code>recall ui</code>.</p>",
    );

  const login = (url: URL, res: Response) => {
    if (!gate) return redirect(res, "/ui/");
    const token = url.searchParams.get("token");
    if (!gate.accepts(token)) return refuse(res);
    const cookieName = gate.cookieName;
    if (cookieName === undefined) return refuse(res);
    const principal = loginPrincipal(url.searchParams);
    if (!principal) {
      // Whose memory to open: asked once, then fixed for the session.
      return page(
        res,
        200,
        "Whose memory?",
        `<form method="get" action="/ui/login"><input type="hidden" name="token" value="${escapeHtml(token!)}">
<label>Tenant <input name="tenant" required autocomplete="off"></label>
<label>Principal <input name="principal" required autocomplete="off"></label>
<button type="submit">Open</button></form>`,
      );
    }
    const cookie = `${cookieName}=${gate.open(principal)}; HttpOnly; SameSite=Strict; Path=/${options.secure ? "; Secure" : ""}`;
    return redirect(res, "/ui/", { "set-cookie": cookie });
  };

  const redirect = (res: Response, location: string, extra: Record<string, string> = {}) => {
    res.writeHead(303, { ...SECURITY_HEADERS, location, ...extra });
    res.end();
  };

  return {
    gate,
    wrap(rpc) {
      return (req, res) => {
        const path = (req.url ?? "/").split("?")[0]!;
        if (path !== "/ui" && !path.startsWith("/ui/")) {
          // Every RPC reply, whichever credential the page sends (cookie or bearer token): memory
          // never lands in the browser's cache.
          res.setHeader("cache-control", "no-store");
          return rpc(req, res);
        }
        if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain; charset=utf-8", "method not allowed\n", { allow: "GET" });
        if (path === "/ui") return redirect(res, "/ui/");
        const rest = path.slice("/ui/".length);
        if (rest === "login") return login(new URL(req.url ?? "/", "http://inspector"), res);
        const body = files.get(rest === "index.html" ? "" : rest);
        if (!body) return send(res, 404, "text/plain; charset=utf-8", "not found\n");
        // The stylesheet holds no memory, and the refusal page uses it too.
        if (gate && rest !== "app.css" && !gate.principalOf(req.headers.cookie)) return refuse(res);
        return send(res, 200, ASSETS[rest === "index.html" ? "" : rest]!, body);
      };
    },
    listening(port) {
      gate?.bind(port, options.secure);
    },
    address(base, principal) {
      if (!gate) return `${base}/ui/`;
      const query = new URLSearchParams({ token: gate.token });
      if (principal) {
        query.set("tenant", principal.tenantId);
        query.set("principal", principal.principalId);
      }
      return `${base}/ui/login?${query.toString()}`;
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

import { ConfigError, type Config } from "../config/config.js";
import { isLoopback } from "../config/edge-config.js";
import { inspectorPage, type InspectorPage } from "./ui-server.js";

/**
 * Start-up of the inspector page (RECALL_UI=on). In the trusted-headers mode
 * anyone who can reach the port could name any principal, so the page is
 * served on loopback only, behind its per-start token; in the verified modes
 * the page sends the user's own credentials and needs no gate.
 */
export function inspectorSetup(config: Config, assetsDir?: URL): InspectorPage | undefined {
  if (!config.ui) return undefined;
  const gated = config.identity.mode === "headers";
  if (gated && !isLoopback(config.listen.host)) {
    throw new ConfigError(
      `RECALL_UI=on with trusted headers serves only on loopback, and RECALL_HOST=${config.listen.host} is not: set RECALL_IDENTITY=jwt (the page then sends the user's token), or RECALL_HOST=127.0.0.1`,
    );
  }
  return inspectorPage({ gated, secure: config.tls !== null, ...(assetsDir ? { assetsDir } : {}) });
}

/** The sidecar's base URL as a browser on this host reaches it. */
export function baseUrl(config: Config, port: number): string {
  const host = config.listen.host === "0.0.0.0" || config.listen.host === "::" ? "127.0.0.1" : config.listen.host;
  return `${config.tls !== null ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

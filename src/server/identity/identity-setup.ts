import { readFile } from "node:fs/promises";
import type { ContextValues } from "@connectrpc/connect";
import type { JSONWebKeySet } from "jose";
import { ConfigError, type Config } from "../../config/config.js";
import { isLoopback } from "../../config/edge-config.js";
import type { Logger } from "../../log/logger.js";
import { trustedHeaders, type PrincipalSource } from "./identity.js";
import type { ListenOptions } from "../listen.js";
import type { peerContextValues } from "./verified-identity.js";

/**
 * Start-up of the identity mode: reads the key, certificate and JWKS files,
 * and refuses to trust headers on an address beyond loopback unless the
 * operator said so (RECALL_ALLOW_UNVERIFIED_IDENTITY=true).
 */
export interface IdentitySetup {
  source: PrincipalSource;
  tls: ListenOptions["tls"];
  contextValues?: (req: Parameters<typeof peerContextValues>[0]) => ContextValues;
}

export async function identitySetup(config: Config, logger: Logger): Promise<IdentitySetup> {
  const { identity } = config;
  const host = config.listen.host;
  if (identity.mode === "headers" && !isLoopback(host)) {
    if (!identity.allowUnverified) {
      throw new ConfigError(
        `RECALL_HOST=${host} is beyond loopback, where anyone could send x-tenant-id: set RECALL_IDENTITY=jwt or mtls, or RECALL_ALLOW_UNVERIFIED_IDENTITY=true if a proxy in front verifies callers`,
      );
    }
    logger.warn({ host }, "trusting x-tenant-id / x-principal-id as sent beyond loopback (RECALL_ALLOW_UNVERIFIED_IDENTITY=true)");
  }
  const tls = config.tls
    ? {
        cert: await readConfigFile(config.tls.certFile, "RECALL_TLS_CERT_FILE"),
        key: await readConfigFile(config.tls.keyFile, "RECALL_TLS_KEY_FILE"),
        ...(config.tls.clientCaFile ? { ca: await readConfigFile(config.tls.clientCaFile, "RECALL_TLS_CLIENT_CA_FILE") } : {}),
      }
    : undefined;
  switch (identity.mode) {
    case "headers":
      return { source: trustedHeaders, tls };
    // The verified modes' code (jose, for JWTs) is imported only when one is configured.
    case "jwt": {
      const jwks = identity.jwksFile ? parseJwks(await readConfigFile(identity.jwksFile, "RECALL_JWT_JWKS_FILE")) : undefined;
      const { jwtSource } = await import("./verified-identity.js");
      return { source: jwtSource({ ...identity, ...(jwks ? { jwks } : { secret: identity.secret }) }), tls };
    }
    case "mtls": {
      const { mtlsSource, peerContextValues } = await import("./verified-identity.js");
      return { source: mtlsSource(identity.spiffePattern), tls, contextValues: peerContextValues };
    }
  }
}

async function readConfigFile(path: string, variable: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

function parseJwks(bytes: Buffer): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new ConfigError("RECALL_JWT_JWKS_FILE: is not JSON");
  }
  if (!parsed || typeof parsed !== "object" || !Array.isArray((parsed as { keys?: unknown }).keys)) {
    throw new ConfigError('RECALL_JWT_JWKS_FILE: must be a JWK Set ({"keys": [...]})');
  }
  return parsed as JSONWebKeySet;
}

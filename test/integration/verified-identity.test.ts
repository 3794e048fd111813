import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, unary, type Clients, type Identity } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { newCa, newPki, read } from "../support/test-pki.js";

/**
 * Who may call (issue 12): trusted headers only on loopback unless the
 * operator says so; JWT (JWKS or shared secret) and mTLS (SPIFFE URI SAN)
 * verified end to end over gRPC, with real tokens and certificates made here.
 * Health and reflection stay open in every mode.
 */

const ISSUER = "https://issuer.test";
const AUDIENCE = "recall";

describe("start-up without a verified identity mode", () => {
  it("refuses to listen beyond loopback on trusted headers: one line, exit 2", () => {
    const run = spawnSync(process.execPath, [CLI, "serve"], {
      env: { PATH: process.env.PATH ?? "", RECALL_HOST: "0.0.0.0", RECALL_PORT: "0", RECALL_DATA_DIR: mkdtempSync(join(tmpdir(), "recall-it-")) },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/^recall: RECALL_HOST=0\.0\.0\.0 is beyond loopback.*RECALL_IDENTITY=jwt or mtls.*RECALL_ALLOW_UNVERIFIED_IDENTITY=true/);
  });

  it("listens beyond loopback when RECALL_ALLOW_UNVERIFIED_IDENTITY=true, and says so", async () => {
    const sidecar = await startSidecarProcess("pglite", { RECALL_HOST: "0.0.0.0", RECALL_ALLOW_UNVERIFIED_IDENTITY: "true" });
    const c = connect(sidecar.address);
    try {
      expect((await unary(c.health, "Check", { service: "" }, {})).status).toBe("SERVING");
      expect(sidecar.logs()).toContain("trusting x-tenant-id / x-principal-id as sent beyond loopback");
    } finally {
      c.close();
      expect(await sidecar.stop()).toBe(0);
    }
  });
});

describe("JWT identity (JWKS file)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  let key: CryptoKey;
  let otherKey: CryptoKey;

  const token = (claims: Record<string, unknown>, opts: { key?: CryptoKey; exp?: string | number; aud?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(opts.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? "5m")
      .sign(opts.key ?? key);
  const as = async (who: { tenant: string; principal: string }, extra: Identity = {}): Promise<Identity> => ({
    token: await token({ tenant_id: who.tenant, sub: who.principal }),
    ...extra,
  });

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    key = pair.privateKey;
    otherKey = (await generateKeyPair("ES256")).privateKey;
    const dir = mkdtempSync(join(tmpdir(), "recall-jwks-"));
    const jwksFile = join(dir, "jwks.json");
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" }] }));
    sidecar = await startSidecarProcess("pglite", {
      RECALL_IDENTITY: "jwt",
      RECALL_JWT_JWKS_FILE: jwksFile,
      RECALL_JWT_ISSUER: ISSUER,
      RECALL_JWT_AUDIENCE: AUDIENCE,
    });
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("takes tenant and principal from the verified token, and isolates by them", async () => {
    const andy = newIdentity("andy");
    const eve = newIdentity("eve");
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy's editor is Helix." })] }, await as(andy));
    const mine = await unary(c.memory, "Search", { text: "what editor does Andy use" }, await as(andy));
    expect(mine.result.rendered).toContain("Helix");
    const theirs = await unary(c.memory, "Search", { text: "what editor does Andy use" }, await as(eve));
    expect(theirs.result.rendered).not.toContain("Helix");
    // Headers that agree with the token are fine.
    const agreeing = await unary(c.memory, "Search", { text: "editor" }, await as(andy, { tenant: andy.tenant, principal: andy.principal }));
    expect(agreeing.result.rendered).toContain("Helix");
  });

  it("answers PERMISSION_DENIED when the headers name someone else", async () => {
    const andy = newIdentity("andy");
    const e = await failure(unary(c.memory, "Search", { text: "editor" }, await as(andy, { tenant: "someone-else" })));
    expect(e.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(e.details).toBe("metadata x-tenant-id does not match the verified identity");
  });

  it("answers UNAUTHENTICATED for a missing, expired, foreign-signed or wrong-audience token, and for headers alone", async () => {
    const andy = newIdentity("andy");
    const claims = { tenant_id: andy.tenant, sub: andy.principal };
    const cases: [Identity, RegExp][] = [
      [{}, /^missing metadata authorization/],
      [{ tenant: andy.tenant, principal: andy.principal }, /^missing metadata authorization/],
      [{ token: await token(claims, { exp: Math.floor(Date.now() / 1000) - 60 }) }, /expired/],
      [{ token: await token(claims, { key: otherKey }) }, /signature does not verify|ERR_JWKS_NO_MATCHING_KEY/],
      [{ token: await token(claims, { aud: "someone-else" }) }, /claim aud/],
      [{ token: await token({ sub: andy.principal }) }, /claim tenant_id/],
      [{ token: "not.a.jwt" }, /bearer token rejected/],
    ];
    for (const [identity, message] of cases) {
      const e = await failure(unary(c.memory, "Search", { text: "editor" }, identity));
      expect(e.code, e.details).toBe(grpc.status.UNAUTHENTICATED);
      expect(e.details).toMatch(message);
    }
  });

  it("keeps health and reflection open", async () => {
    expect((await unary(c.health, "Check", { service: "" }, {})).status).toBe("SERVING");
    const answers = await new Promise<unknown[]>((resolve, reject) => {
      const call = c.reflectionV1.ServerReflectionInfo();
      const out: unknown[] = [];
      call.on("data", (m: unknown) => out.push(m));
      call.on("end", () => resolve(out));
      call.on("error", reject);
      call.write({ list_services: "" });
      call.end();
    });
    expect(answers).toHaveLength(1);
  });
});

describe("JWT identity (shared secret)", () => {
  it("verifies HS256 tokens against RECALL_JWT_SECRET", async () => {
    const secret = "a-test-secret-that-is-32-chars-long!";
    const sidecar = await startSidecarProcess("pglite", {
      RECALL_IDENTITY: "jwt",
      RECALL_JWT_SECRET: secret,
      RECALL_JWT_ISSUER: ISSUER,
      RECALL_JWT_AUDIENCE: AUDIENCE,
      RECALL_JWT_TENANT_CLAIM: "org",
    });
    const c = connect(sidecar.address);
    try {
      const sign = (s: string) =>
        new SignJWT({ org: "acme", sub: "andy" }).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime("5m").sign(new TextEncoder().encode(s));
      const ok = await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, { token: await sign(secret) });
      expect(ok.written).toBe(1);
      const e = await failure(unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, { token: await sign(`${secret}-wrong`) }));
      expect(e.code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      c.close();
      expect(await sidecar.stop()).toBe(0);
    }
  });
});

describe("mTLS identity (SPIFFE URI SAN)", () => {
  const pki = newPki();
  const PATTERN = "spiffe://test.example/tenant/{tenant}/principal/{principal}";
  let sidecar: SidecarProcess;
  const env = {
    RECALL_IDENTITY: "mtls",
    RECALL_TLS_CERT_FILE: pki.serverCert,
    RECALL_TLS_KEY_FILE: pki.serverKey,
    RECALL_TLS_CLIENT_CA_FILE: pki.caCert,
    RECALL_MTLS_SPIFFE_PATTERN: PATTERN,
  };

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", env);
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  const client = (cert?: { cert: string; key: string }) =>
    connect(sidecar.address, grpc.credentials.createSsl(read(pki.caCert), cert ? read(cert.key) : null, cert ? read(cert.cert) : null));

  it("takes tenant and principal from the client certificate's SPIFFE ID, and isolates by them", async () => {
    const andy = client(pki.client(pki.ca, "spiffe://test.example/tenant/acme/principal/andy"));
    const eve = client(pki.client(pki.ca, "spiffe://test.example/tenant/acme/principal/eve"));
    try {
      await unary(andy.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy's editor is Helix." })] }, {});
      expect((await unary(andy.memory, "Search", { text: "what editor does Andy use" }, {})).result.rendered).toContain("Helix");
      expect((await unary(eve.memory, "Search", { text: "what editor does Andy use" }, {})).result.rendered).not.toContain("Helix");
      const e = await failure(unary(eve.memory, "Search", { text: "editor" }, { tenant: "acme", principal: "andy" }));
      expect(e.code).toBe(grpc.status.PERMISSION_DENIED);
    } finally {
      andy.close();
      eve.close();
    }
  });

  it("answers UNAUTHENTICATED without a certificate, with one from another CA, or with a SPIFFE ID off the pattern", async () => {
    const stranger = newCa(pki.dir, "other-ca");
    const cases = [
      client(),
      client(pki.client(stranger, "spiffe://test.example/tenant/acme/principal/andy")),
      client(pki.client(pki.ca, "spiffe://elsewhere.example/tenant/acme/principal/andy")),
    ];
    try {
      for (const c of cases) {
        const e = await failure(unary(c.memory, "Search", { text: "editor" }, { tenant: "acme", principal: "andy" }));
        expect(e.code, e.details).toBe(grpc.status.UNAUTHENTICATED);
        // Health stays open to anyone who can reach the port.
        expect((await unary(c.health, "Check", { service: "" }, {})).status).toBe("SERVING");
      }
    } finally {
      for (const c of cases) c.close();
    }
  });

  it("answers `recall health` (the container's HEALTHCHECK) over TLS", () => {
    const run = spawnSync(process.execPath, [CLI, "health"], {
      env: { PATH: process.env.PATH ?? "", ...env, RECALL_PORT: String(sidecar.port) },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.stdout.trim(), run.stderr).toBe("SERVING");
    expect(run.status).toBe(0);
  });
});

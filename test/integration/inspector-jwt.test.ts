import { existsSync } from "node:fs";
import { SignJWT } from "jose";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The inspector in the jwt mode: no token gate; the page asks for the user's
 * bearer token, keeps it in the tab's memory, and sees that user's memory only.
 */
const CHROMIUM = "/usr/bin/chromium";
const SECRET = "an-inspector-test-secret-of-32-chars!!";
const ISSUER = "https://issuer.test";
const AUDIENCE = "recall";
const sign = (sub: string) =>
  new SignJWT({ tenant_id: "acme", sub }).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime("5m").sign(new TextEncoder().encode(SECRET));

describe("memory inspector page in the jwt mode (Chromium)", () => {
  let sidecar: SidecarProcess;
  let browser: Browser;
  let grpc: Clients;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    sidecar = await startSidecarProcess("pglite", {
      RECALL_UI: "on",
      RECALL_IDENTITY: "jwt",
      RECALL_JWT_SECRET: SECRET,
      RECALL_JWT_ISSUER: ISSUER,
      RECALL_JWT_AUDIENCE: AUDIENCE,
    });
    grpc = connect(sidecar.address);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    grpc?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("asks for the bearer token, then shows that user's memory and nobody else's", async () => {
    await unary(grpc.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy's editor is Helix." })] }, { token: await sign("andy") });
    await unary(grpc.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Bob's editor is Emacs." })] }, { token: await sign("bob") });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://${sidecar.address}/ui/`);
    await page.getByText("Sign in to your memory").waitFor({ timeout: 15_000 });
    await page.getByLabel("Bearer token").fill(await sign("andy"));
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByTestId("principal").filter({ hasText: "andy" }).waitFor({ timeout: 15_000 });
    await page.getByText("Andy's editor is Helix.").waitFor({ timeout: 15_000 });
    expect(await page.locator("body").textContent()).not.toContain("Emacs");
    expect(await page.evaluate("localStorage.length + sessionStorage.length")).toBe(0);
    expect((await context.cookies()).length).toBe(0);
    await context.close();
  });
});

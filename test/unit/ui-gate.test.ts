import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { cookieValue, UiGate, uiCookieName } from "../../src/inspect/ui-gate.js";
import { inspectorSetup } from "../../src/inspect/ui-setup.js";
import { trustedHeaders } from "../../src/server/identity/identity.js";

/** The inspector's gate in the trusted-headers mode: the per-start token, the session cookie, and where the page may be served. */
describe("inspector gate", () => {
  const call = (headers: Record<string, string>) => ({ header: new Headers(headers), contextValues: createContextValues() });

  it("accepts its own token only", () => {
    const gate = new UiGate();
    expect(gate.accepts(gate.token)).toBe(true);
    expect(gate.accepts(`${gate.token}x`)).toBe(false);
    expect(gate.accepts(new UiGate().token)).toBe(false);
    expect(gate.accepts(null)).toBe(false);
  });

  it("a session cookie is its principal; headers must agree; an unknown cookie is UNAUTHENTICATED; no cookie is as before", async () => {
    const gate = new UiGate();
    gate.bind(41100, false);
    const source = gate.identitySource(trustedHeaders);
    const id = gate.open({ tenantId: "t", principalId: "andy" });
    expect(await source(call({ cookie: `other=1; recall_ui_41100=${id}` }))).toEqual({ tenantId: "t", principalId: "andy" });
    expect(await source(call({ cookie: `recall_ui_41100=${id}`, "x-tenant-id": "t", "x-principal-id": "andy" }))).toEqual({ tenantId: "t", principalId: "andy" });
    const denied = await source(call({ cookie: `recall_ui_41100=${id}`, "x-tenant-id": "t", "x-principal-id": "mallory" })).catch((e: unknown) => e);
    expect(ConnectError.from(denied).code).toBe(Code.PermissionDenied);
    const unknown = await source(call({ cookie: "recall_ui_41100=forged" })).catch((e: unknown) => e);
    expect(ConnectError.from(unknown).code).toBe(Code.Unauthenticated);
    expect(await source(call({ "x-tenant-id": "t", "x-principal-id": "bob" }))).toEqual({ tenantId: "t", principalId: "bob" });
  });

  it("names its cookie by the port (every sidecar on a host has its own), __Host- prefixed under TLS; another port's is not read", async () => {
    expect(uiCookieName(41100, false)).toBe("recall_ui_41100");
    expect(uiCookieName(41101, true)).toBe("__Host-recall_ui_41101");
    const gate = new UiGate();
    const id = gate.open({ tenantId: "t", principalId: "andy" });
    // Before the port is bound no cookie is read.
    expect(gate.principalOf(`recall_ui_41100=${id}`)).toBeNull();
    gate.bind(41100, false);
    expect(gate.principalOf(`recall_ui_41100=${id}`)).toEqual({ tenantId: "t", principalId: "andy" });
    expect(gate.principalOf(`recall_ui_41101=${id}; recall_ui=${id}`)).toBeNull();
  });

  it("reads one cookie out of a Cookie header", () => {
    expect(cookieValue("a=1; recall_ui=xyz; b=2", "recall_ui")).toBe("xyz");
    expect(cookieValue("recall_uix=1", "recall_ui")).toBeNull();
    expect(cookieValue(undefined, "recall_ui")).toBeNull();
  });

  it("serves the page in the trusted-headers mode on loopback only, and not at all when off", () => {
    expect(inspectorSetup(loadConfig({}))).toBeUndefined();
    // The page as `npm run build` wrote it (the suite runs after the build).
    const built = new URL("../../dist/ui/", import.meta.url);
    expect(inspectorSetup(loadConfig({ RECALL_UI: "on" }), built)?.gate).toBeDefined();
    expect(inspectorSetup(loadConfig({ RECALL_UI: "on", RECALL_IDENTITY: "jwt", RECALL_JWT_SECRET: "x".repeat(32), RECALL_JWT_ISSUER: "i", RECALL_JWT_AUDIENCE: "a" }), built)?.gate).toBeUndefined();
    expect(() => inspectorSetup(loadConfig({ RECALL_UI: "on", RECALL_HOST: "0.0.0.0", RECALL_ALLOW_UNVERIFIED_IDENTITY: "true" }), built)).toThrow(ConfigError);
    expect(() => loadConfig({ RECALL_UI: "yes" })).toThrow(/RECALL_UI/);
  });
});

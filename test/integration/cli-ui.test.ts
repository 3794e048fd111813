import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** `recall ui` finds a running sidecar's inspector through its runtime file, and prints its address with the token. */
describe("recall ui", () => {
  // A fixed port (the runtime file is named by it), in a range no other test uses.
  const PORT = "46050";
  let dir: string;
  let sidecar: SidecarProcess;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-ui-"));
    sidecar = await startSidecarProcess("pglite", { RECALL_PORT: PORT, RECALL_UI: "on", XDG_RUNTIME_DIR: dir });
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  const ui = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "ui", ...args], { env: { PATH: process.env.PATH ?? "", RECALL_PORT: PORT, XDG_RUNTIME_DIR: dir } });
      let stdout = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
      child.on("close", (code) => resolve({ code, stdout }));
    });

  it("prints the running sidecar's address, with the principal to open, and the address works", async () => {
    const file = join(dir, "recall", `ui-${PORT}.json`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const { code, stdout } = await ui(["--tenant", "acme", "--principal", "andy"]);
    expect(code).toBe(0);
    const url = /http:\/\/127\.0\.0\.1:46050\/ui\/login\?\S+/.exec(stdout)![0];
    expect(url).toContain("tenant=acme");
    expect(url).toContain(`token=${new URL(JSON.parse(await readFile(file, "utf8")).url).searchParams.get("token")}`);
    const login = await fetch(url, { redirect: "manual" });
    expect(login.status).toBe(303);
    expect(login.headers.get("set-cookie")).toMatch(new RegExp(`^recall_ui_${PORT}=\\S+; HttpOnly; SameSite=Strict; Path=/`));
    const page = await fetch(`http://127.0.0.1:${PORT}/ui/`, { headers: { cookie: login.headers.get("set-cookie")!.split(";")[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="/ui/app.js">');
    // The page's calls: the cookie is the principal, and the reply is never cached.
    const call = await fetch(`http://127.0.0.1:${PORT}/memory.v1.InspectService/GetPrincipalSummary`, {
      method: "POST",
      headers: { cookie: login.headers.get("set-cookie")!.split(";")[0]!, "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    });
    expect(call.status).toBe(200);
    expect(call.headers.get("cache-control")).toBe("no-store");
    expect(await call.json()).toMatchObject({ tenantId: "acme", principalId: "andy" });
  });
});

import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, type Clients } from "../support/grpc-client.js";
import { CLI } from "../support/sidecar-process.js";

/**
 * The memory inspector end to end, as a newcomer meets it: `recall demo`
 * started as a process (it turns the page on and prints the address with its
 * token), the page driven in Debian's Chromium through playwright-core (no
 * browser download), and the effect of an action checked over gRPC with the
 * independent grpc-js client. RECALL_INSPECTOR_SCREENSHOTS=1 also writes the
 * screenshots of docs/inspector.md.
 */

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 15_000 };

/** Waits until the locator shows `text` (playwright-core has no expect of its own; vitest's does not wait). */
async function shows(locator: Locator, text: string | RegExp): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor(WAIT);
}
const SHOTS = process.env.RECALL_INSPECTOR_SCREENSHOTS === "1" ? fileURLToPath(new URL("../../docs/inspector/", import.meta.url)) : null;
const ANDY = { tenant: "demo-tenant", principal: "andy" };
const FLY = "c0ffee01-0000-4000-8000-000000000006";

describe("memory inspector page (demo, Chromium)", () => {
  let dir: string;
  let demo: ChildProcess;
  let output = "";
  let login = "";
  let base = "";
  let browser: Browser;
  let grpc: Clients;
  /** Console errors of every page (CSP violations show up here). */
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    dir = await mkdtemp(join(tmpdir(), "recall-inspector-"));
    demo = spawn(process.execPath, [CLI, "demo"], {
      env: { PATH: process.env.PATH ?? "", RECALL_PORT: "0", RECALL_DATA_DIR: join(dir, "data"), RECALL_SHUTDOWN_GRACE_MS: "2000" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    demo.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    demo.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const deadline = Date.now() + 60_000;
    while (!/Ctrl-C to stop/.test(output)) {
      if (Date.now() > deadline || demo.exitCode !== null) throw new Error(`demo did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    login = /^\s+(http:\/\/127\.0\.0\.1:\d+\/ui\/login\?\S+)$/m.exec(output)![1]!;
    base = new URL(login).origin;
    grpc = connect(base.replace("http://", ""));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    if (SHOTS) await mkdir(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    grpc?.close();
    if (demo && demo.exitCode === null) {
      const exited = new Promise((r) => demo.once("exit", r));
      demo.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  async function open(url: string, options: { width?: number; dark?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.dark ? "dark" : "light" });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().includes("status of 404")) problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(url);
    return { context, page };
  }
  const shot = async (page: Page, name: string, fullPage = false) => {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
  };
  const recallIds = async (text: string, subjects: string[]): Promise<string[]> => {
    const events = await serverStream(grpc.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text, subjects } }, ANDY);
    return events.at(-1)!.result.items.map((i: { belief_id: string }) => i.belief_id);
  };

  it("is refused without the token, and with a wrong one", async () => {
    const { context, page } = await open(`${base}/ui/`);
    await shows(page.locator("h1"), /Refused/);
    const plain = await page.request.get(`${base}/ui/app.js`);
    expect(plain.status()).toBe(403);
    const wrong = await page.request.get(`${base}/ui/login?token=not-the-token&tenant=demo-tenant&principal=andy`);
    expect(wrong.status()).toBe(403);
    await context.close();
    // The refusals above are logged by the browser as failed loads; they were the point.
    problems.length = 0;
  });

  it("opens with the token, as a cookie only the page's origin sends, under a strict CSP and no-store", async () => {
    const { context, page } = await open(login);
    await shows(page.getByTestId("principal"), "andy");
    expect(await page.locator("body").textContent()).not.toContain("Loading the memory inspector");
    // The token left the address bar.
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/(#\w+)?$/);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: `recall_ui_${new URL(base).port}`, httpOnly: true, sameSite: "Strict" });
    const response = await page.request.get(`${base}/ui/`);
    expect(response.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(response.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(response.headers()["cache-control"]).toBe("no-store");
    // The injection the safety pass withholds from the agent is withheld from the page too.
    await shows(page.locator("article.belief"), "withheld from the agent");
    expect(await page.locator("body").textContent()).not.toContain("attacker");
    await shot(page, "memory");
    await context.close();
  });

  it("finds a belief by search and shows it with its trust label, what it replaced and its raw values", async () => {
    const { context, page } = await open(login);
    await page.getByLabel("Search memory").fill("which editor does Andy use");
    await page.keyboard.press("Enter");
    const results = page.getByTestId("search-results");
    await shows(results, "Andy's editor is Helix.");
    await results.getByRole("button", { name: "Andy's editor is Helix." }).click();
    const detail = page.getByTestId("belief-detail");
    await shows(detail, "Sure — you said so");
    await shows(detail.locator("section", { hasText: "It replaced" }), "Andy's editor is Vim.");
    await detail.getByText("Raw values").first().click();
    await shows(detail, "AUTHORITY_USER");
    await shot(page, "memory-belief");
    await context.close();
  });

  it("works with the keyboard alone: tabs move with the arrow keys, a search result opens with Enter", async () => {
    const { context, page } = await open(login);
    await page.getByRole("tab", { name: "Memory" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.locator('#tab-timeline[aria-selected="true"]').waitFor(WAIT);
    expect(await page.evaluate("document.activeElement.id")).toBe("tab-timeline");
    await page.keyboard.press("ArrowLeft");
    await page.locator('#tab-memory[aria-selected="true"]').waitFor(WAIT);
    await page.getByLabel("Search memory").focus();
    await page.keyboard.type("which editor does Andy use");
    await page.keyboard.press("Enter");
    await shows(page.getByTestId("search-results"), "Andy's editor is Helix.");
    for (let i = 0; i < 10 && (await page.evaluate("document.activeElement.textContent")) !== "Andy's editor is Helix."; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await shows(page.getByTestId("belief-detail"), "It replaced");
    await context.close();
  });

  it("shows what the agent saw in turn t-7 and why: the user view, and the operator's trace with the block byte for byte", async () => {
    const { context, page } = await open(login);
    await page.getByRole("tab", { name: "Turns" }).click();
    await page.getByRole("button", { name: /demo-session-2/ }).click();
    await page.locator("[data-turn-id=t-7]").click();
    const view = page.getByTestId("user-view");
    await shows(view, "Deploys are gated on CI passing on main.");
    await shows(view.locator("li", { hasText: "Deploys are gated" }), "used in the answer");
    await shows(view, "withheld by the safety pass");
    // The injection the safety pass withheld is never shown to the user.
    expect(await view.textContent()).not.toContain("attacker");
    await page.locator("details.trace summary").first().click();
    await shows(page.getByTestId("block-check"), /Verified/);
    const block = await page.getByTestId("rendered-block").textContent();
    const sha = await page.getByTestId("sha256").textContent();
    expect(createHash("sha256").update(block!, "utf8").digest("hex")).toBe(sha);
    await shows(page.getByTestId("ranked"), "withheld by safety");
    await page.getByTestId("user-view").scrollIntoViewIfNeeded();
    await shot(page, "turns");
    await page.getByTestId("rendered-block").scrollIntoViewIfNeeded();
    await shot(page, "turns-trace");
    await context.close();
  });

  it("rejects a belief from the page, and the next recall over gRPC no longer returns it", async () => {
    expect(await recallIds("Where is veetbot deployed?", ["veetbot deploy"])).toContain(FLY);
    const { context, page } = await open(login);
    await page.locator(`article[data-belief-id="${FLY}"] button.link`).click();
    await page.getByRole("button", { name: "This is wrong…" }).click();
    await page.getByLabel("Not true: stop believing it").check();
    await page.getByLabel("Why (optional)").fill("we moved off Fly.io");
    await page.getByRole("button", { name: "Reject", exact: true }).click();
    await shows(page.getByTestId("next-recall-verdict"), "The next recall no longer returns it.");
    await shot(page, "actions");
    expect(await recallIds("Where is veetbot deployed?", ["veetbot deploy"])).not.toContain(FLY);
    await context.close();
  });

  it("shows the timeline with an as-of cursor, at 390 px in the dark scheme too", async () => {
    const { context, page } = await open(login);
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.getByTestId("as-of").fill("2026-03-01");
    // On 1 March 2026 Andy's editor was still Vim, and Helix was not yet recorded.
    await shows(page.getByTestId("held-then"), "2026-03-01");
    await page.locator('g.row.held[data-belief-id="5e9d3c11-0000-4000-8000-000000000003"]').waitFor(WAIT);
    await page.locator('g.row.dim[data-belief-id="9d02b117-0000-4000-8000-000000000004"]').waitFor(WAIT);
    await shot(page, "timeline");
    await context.close();
    const narrow = await open(login, { width: 390, dark: true });
    await shows(narrow.page.getByTestId("principal"), "andy");
    // Nothing wider than the screen: the page reflows instead of scrolling sideways.
    expect(await narrow.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot(narrow.page, "memory-390-dark");
    await narrow.context.close();
  });

  it("a second principal's page shows none of the first's memory, and cannot ask for it", async () => {
    const intruder = new URL(login);
    intruder.searchParams.set("principal", "mallory");
    const { context, page } = await open(intruder.toString());
    await shows(page.getByTestId("principal"), "mallory");
    await shows(page.getByTestId("shown"), /Showing 0 of 0/);
    await page.getByLabel("Search memory").fill("Andy editor deploy");
    await page.keyboard.press("Enter");
    await shows(page.getByTestId("search-results"), "Nothing in memory");
    await page.getByRole("tab", { name: "Turns" }).click();
    await shows(page.locator("main"), "No recalls have been traced yet.");
    expect(await page.locator("body").textContent()).not.toMatch(/Helix|Fly\.io|Berlin/);
    // The session cookie names mallory: headers naming andy are refused, not obeyed.
    const status = await page.evaluate(async () => {
      const r = await fetch("/memory.v1.InspectService/ListBeliefs", {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": "demo-tenant", "x-principal-id": "andy" },
        body: "{}",
      });
      return r.status;
    });
    expect(status).toBe(403);
    // That refusal is logged by the browser as a failed load; it was the point.
    await page.waitForTimeout(200);
    problems.splice(0, problems.length, ...problems.filter((p) => !p.includes("status of 403")));
    // Nothing of memory is kept in the browser's storage.
    // (Evaluated in the page, whose globals this file's types do not know.)
    const stored = await page.evaluate(`(async () => ({
      local: localStorage.length,
      session: sessionStorage.length,
      caches: (await caches.keys()).length,
      databases: (await indexedDB.databases()).length,
    }))()`);
    expect(stored).toEqual({ local: 0, session: 0, caches: 0, databases: 0 });
    await context.close();
  });

  it("raised no console error and no Content-Security-Policy violation", () => {
    expect(problems).toEqual([]);
  });
});

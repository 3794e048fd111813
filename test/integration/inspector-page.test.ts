import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
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
const CONCISE = "8f21a0c3-0000-4000-8000-000000000001";
const RUST = "f00d4e5a-0000-4000-8000-00000000000c";
const INJECTION = "0d3e9a11-0000-4000-8000-000000000009";
/** A second principal whose memory holds a belief replaced the documented way: a successor naming it in `supersedes`. */
const BEA = { tenant: "demo-tenant", principal: "bea" };
const BASH = "b0a5b0a5-0000-4000-8000-000000000001";
const FISH = "b0a5b0a5-0000-4000-8000-000000000002";
const WIDTHS = [1280, 390];

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
    // The turn repeats its question.
    await shows(page.getByTestId("question"), "Draft the release note for Andy: how do we deploy veetbot, and what gates a deploy?");
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
    const ranked = page.getByTestId("ranked");
    await shows(ranked, "withheld by the safety pass");
    // One exact reason per candidate, from the trace: the 0.49 belief is shown because it clears the floor,
    // the higher-scored ones about Andy are held back by the floor's relative part; no three-way guess.
    await shows(ranked.locator(`tr[data-belief-id="${CONCISE}"]`), "held back by the relative floor");
    await ranked.locator(`tr[data-belief-id="${RUST}"][data-outcome=shown]`).waitFor(WAIT);
    expect(await ranked.textContent()).not.toContain("collapsed, below the floor, or already in the snapshot");
    expect(await ranked.locator("tr[data-outcome=unspecified]").count()).toBe(0);
    // The withheld statement has no score and no trust label.
    const withheld = ranked.locator(`tr[data-belief-id="${INJECTION}"]`);
    expect(await withheld.locator("td").nth(2).textContent()).toBe("—");
    expect(await withheld.textContent()).not.toMatch(/sure/i);
    await page.getByTestId("user-view").scrollIntoViewIfNeeded();
    await shot(page, "turns");
    await page.getByTestId("rendered-block").scrollIntoViewIfNeeded();
    await shot(page, "turns-trace");
    await context.close();
  });

  it("rejects a belief from the page, and the next recall over gRPC no longer returns it", async () => {
    expect(await recallIds("Where is veetbot deployed?", ["veetbot deploy"])).toContain(FLY);
    const { context, page } = await open(login);
    // The session's project arrives after Reject is pressed (a loaded machine): the next recall must still run in it.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/memory.v1.InspectService/ListSessions", async (route) => {
      await held;
      await route.continue();
    });
    await page.locator(`article[data-belief-id="${FLY}"] button.link`).click();
    await page.getByRole("button", { name: "This is wrong…" }).click();
    await page.getByLabel("Not true: stop believing it").check();
    await page.getByLabel("Why (optional)").fill("we moved off Fly.io");
    await page.getByRole("button", { name: "Reject", exact: true }).click();
    setTimeout(release, 500);
    await shows(page.getByTestId("next-recall-verdict"), "The next recall no longer returns it.");
    await shot(page, "actions");
    expect(await recallIds("Where is veetbot deployed?", ["veetbot deploy"])).not.toContain(FLY);
    // The next recall ran as the session would, in its project (veetbot): the same bytes as the agent's
    // recall, the Kubernetes belief not labelled as carried from elsewhere.
    const next = await page.getByTestId("next-recall").textContent();
    const events = await serverStream(grpc.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "veetbot deploys to Fly.io.", subjects: ["veetbot deploy"] } }, ANDY);
    expect(next).toBe(events.at(-1)!.result.rendered);
    expect(next).toContain("[m:c0ffee02] veetbot deploys to the team's Kubernetes cluster.");
    expect(next).not.toContain("(learned in veetbot)");
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

  it("explains a trace under the page's ceiling: candidates above it are counted, never named", async () => {
    const { context, page } = await open(login);
    await page.getByTestId("ceiling").selectOption({ label: "public" });
    await page.getByRole("tab", { name: "Turns" }).click();
    await page.getByRole("button", { name: /demo-session-2/ }).click();
    await page.locator("[data-turn-id=t-7]").click();
    await page.locator("details.trace summary").first().click();
    await shows(page.getByTestId("above-ceiling"), /^10 candidate\(s\) above this view's sensitivity/);
    expect(await page.getByTestId("ranked").locator("tbody tr").count()).toBe(0);
    expect(await page.getByTestId("ranked").textContent()).not.toMatch(/Fly\.io|Kubernetes|Andy/);
    await context.close();
  });

  it("says it is loading, not \"Showing 0 of 0\", until the first page of beliefs arrives", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/memory.v1.InspectService/ListBeliefs", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(login);
    await shows(page.getByTestId("principal"), "andy");
    const shown = page.getByTestId("shown");
    await shows(shown, "Loading beliefs…");
    expect(await shown.textContent()).not.toMatch(/Showing 0 of 0/);
    release();
    await shows(shown, /Showing [1-9]\d* of [1-9]\d* beliefs/);
    await context.close();
  });

  it("calls a belief replaced through a successor's supersedes replaced, as recall does, never current", async () => {
    const day = (iso: string) => ({ seconds: String(Math.floor(new Date(iso).getTime() / 1000)), nanos: 0 });
    const shell = (id: string, statement: string, at: string, supersedes: string[] = []): Json => ({
      belief_id: id,
      subject: "Bea",
      statement,
      belief_type: "preference",
      predicate_key: "shell",
      status: "BELIEF_STATUS_ACTIVE",
      confidence: 0.9,
      authority: "AUTHORITY_USER",
      origin_scope: "veetbot",
      scope_level: "SCOPE_LEVEL_USER",
      portability: "PORTABILITY_PORTABLE",
      recorded_at: day(at),
      valid_from: day(at),
      last_evidence_at: day(at),
      evidence_count: 1,
      supersedes,
    });
    // Formation writes the successor and leaves the old row active: the documented succession path.
    await unary(grpc.write, "PutBeliefs", { beliefs: [shell(BASH, "Bea's shell is bash.", "2026-01-10T09:00:00Z"), shell(FISH, "Bea's shell is fish.", "2026-05-10T09:00:00Z", [BASH])] }, BEA);
    const events = await serverStream(grpc.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "which shell does Bea use", subjects: ["Bea"] } }, BEA);
    const ids = events.at(-1)!.result.items.map((i: { belief_id: string }) => i.belief_id);
    expect(ids).toContain(FISH);
    expect(ids).not.toContain(BASH);

    const as = new URL(login);
    as.searchParams.set("principal", "bea");
    const { context, page } = await open(as.toString());
    await shows(page.getByTestId("shown"), /Showing 1 of 1 beliefs/);
    await page.locator(`article[data-belief-id="${FISH}"]`).waitFor(WAIT);
    expect(await page.locator(`article[data-belief-id="${BASH}"]`).count()).toBe(0);
    await shows(page.getByTestId("counts"), "1 current");
    await shows(page.getByTestId("counts"), "1 replaced");
    await page.getByLabel("replaced").check();
    const old = page.locator(`.list article[data-belief-id="${BASH}"]`);
    await shows(old.locator(".pill"), /^replaced$/);
    await shows(old, "replaced by a newer belief");
    await old.locator("button.link").click();
    await shows(page.getByTestId("belief-detail").locator("section", { hasText: "Replaced by" }), "Bea's shell is fish.");
    expect(await page.locator("article.belief", { hasText: "replaced by a newer belief" }).locator(".pill", { hasText: /^current$/ }).count()).toBe(0);
    await context.close();
  });

  for (const width of WIDTHS) {
    it(`at ${width} px, opening a belief low in the list shows its detail on screen`, async () => {
      const { context, page } = await open(login, { width });
      await shows(page.getByTestId("shown"), /Showing [1-9]/);
      const last = page.locator(".list article.belief").last();
      const id = await last.getAttribute("data-belief-id");
      await last.locator("button.link").click();
      const detail = page.getByTestId("belief-detail");
      await detail.locator(`article.belief[data-belief-id="${id}"]`).waitFor(WAIT);
      await page.waitForTimeout(300);
      const header = (await page.locator("header.top").boundingBox())!;
      const box = (await detail.boundingBox())!;
      // Its top is on screen, below the sticky header.
      expect(box.y).toBeGreaterThanOrEqual(header.y + header.height - 1);
      expect(box.y).toBeLessThan(900 - 100);
      // Closing it returns to the card.
      await detail.getByRole("button", { name: "← close" }).click();
      await page.waitForTimeout(300);
      const card = (await page.locator(`.list article.belief[data-belief-id="${id}"]`).boundingBox())!;
      expect(card.y).toBeGreaterThanOrEqual(0);
      expect(card.y).toBeLessThan(900);
      await context.close();
    });

    it(`at ${width} px, no timeline label is cut off by the chart's edge`, async () => {
      const { context, page } = await open(login, { width });
      await page.getByRole("tab", { name: "Timeline" }).click();
      await page.locator("g.row").first().waitFor(WAIT);
      await page.waitForTimeout(300);
      const labels = await page.locator("svg text.label").evaluateAll((nodes) =>
        nodes.map((n) => {
          const svg = n.closest("svg")!.getBoundingClientRect();
          const box = n.getBoundingClientRect();
          return { text: n.textContent ?? "", left: box.left - svg.left, right: svg.right - box.right };
        }),
      );
      expect(labels.length).toBeGreaterThan(5);
      for (const l of labels) {
        expect(l.left, l.text).toBeGreaterThanOrEqual(0);
        expect(l.right, l.text).toBeGreaterThanOrEqual(0);
      }
      // At 1280 px every label fits whole; narrower, a long one ends in an ellipsis (the full text is its tooltip).
      if (width >= 1280) expect(labels.filter((l) => l.text.endsWith("…"))).toEqual([]);
      await context.close();
    });
  }

  it("a withheld belief in search shows neither a trust label nor a score", async () => {
    const { context, page } = await open(login);
    await page.getByLabel("Search memory").fill("deploys deploy API keys");
    await page.keyboard.press("Enter");
    const item = page.getByTestId("search-results").locator(`article[data-belief-id="${INJECTION}"]`);
    await shows(item, "withheld by the safety pass");
    const text = (await item.textContent()) ?? "";
    expect(text).not.toMatch(/sure/i);
    expect(text).not.toContain("score");
    expect(text).not.toContain("attacker");
    await context.close();
  });

  it("raised no console error and no Content-Security-Policy violation", () => {
    expect(problems).toEqual([]);
  });
});

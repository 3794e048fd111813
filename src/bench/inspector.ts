import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { chromium } from "playwright-core";
import { Authority, BeliefSchema, BeliefStatus, Portability, ScopeLevel } from "../gen/memory/v1/types_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";
import { InspectService } from "../gen/memory/v1/inspect_service_pb.js";
import { startSidecar } from "./sidecar-process.js";
import { median } from "./stats.js";

/**
 * `npm run bench:inspector`: how long the memory inspector's first view takes
 * to become usable in Debian's Chromium, for a principal with 10,000 beliefs
 * and, as the floor measured in the same run, one with 10. "Usable" is the
 * first page of beliefs listed with its total, then one belief opened with
 * its neighbours (a click answered). Medians of RUNS fresh browser contexts.
 */

const RUNS = 7;
const SIZES = [10, 10_000];
const CHROMIUM = process.env.RECALL_CHROMIUM ?? "/usr/bin/chromium";

const sidecar = await startSidecar({ RECALL_DATA_DIR: "memory://", RECALL_UI: "on", RECALL_LOG_LEVEL: "info" });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
try {
  const url = JSON.parse(sidecar.tail().split("\n").find((l) => l.includes("memory inspector"))!).url as string;
  const tenant = "bench";
  const results: { size: number; listedMs: number; openedMs: number; rpcMs: number }[] = [];
  for (const size of SIZES) {
    const principal = `p-${size}`;
    const inspect = await load(sidecar.address, tenant, principal, size);
    // The first page's RPC alone, from Node: the server's share of the first view.
    const rpc: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      await inspect.listBeliefs({ statuses: [BeliefStatus.ACTIVE, BeliefStatus.PROVISIONAL], pageSize: 50 });
      rpc.push(performance.now() - started);
    }
    const login = new URL(url);
    login.searchParams.set("tenant", tenant);
    login.searchParams.set("principal", principal);
    const listed: number[] = [];
    const opened: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(login.toString());
      // Every tenth belief replaces the one before it, so a tenth of them are not current: any total will do.
      await page.getByTestId("shown").filter({ hasText: /Showing \d+ of \d+ beliefs/ }).waitFor({ timeout: 30_000 });
      listed.push(performance.now() - started);
      const click = performance.now();
      await page.locator("article.belief button.link").first().click();
      await page.getByTestId("belief-detail").locator("h3").first().waitFor({ timeout: 30_000 });
      opened.push(performance.now() - click);
      await context.close();
    }
    results.push({ size, listedMs: median(listed), openedMs: median(opened), rpcMs: median(rpc) });
  }
  const floor = results[0]!;
  process.stdout.write(`memory inspector first view, medians of ${RUNS} fresh contexts (Chromium ${browser.version()})\n`);
  for (const r of results) {
    process.stdout.write(
      `  ${String(r.size).padStart(6)} beliefs: listed ${r.listedMs.toFixed(0)} ms (${(r.listedMs / floor.listedMs).toFixed(2)}x the 10-belief floor), ` +
        `a belief opened ${r.openedMs.toFixed(0)} ms later; the first page's ListBeliefs alone ${r.rpcMs.toFixed(1)} ms\n`,
    );
  }
} finally {
  await browser.close();
  await sidecar.stop();
}

/** `size` beliefs for one principal, in writes of 1,000, with supersession chains so links are real. */
async function load(address: string, tenantId: string, principalId: string, size: number): Promise<Client<typeof InspectService>> {
  const transport = createGrpcTransport({
    baseUrl: `http://${address}`,
    interceptors: [
      (next) => (req) => {
        req.header.set("x-tenant-id", tenantId);
        req.header.set("x-principal-id", principalId);
        return next(req);
      },
    ],
  });
  const write = createClient(MemoryWriteService, transport);
  let previous = "";
  for (let start = 0; start < size; start += 1000) {
    const beliefs = [];
    for (let i = start; i < Math.min(size, start + 1000); i++) {
      const id = randomUUID();
      const at = timestampFromDate(new Date(Date.UTC(2025, 0, 1) + i * 3_600_000));
      beliefs.push(
        create(BeliefSchema, {
          beliefId: id,
          subject: `subject ${i % 500}`,
          statement: `Fact number ${i} about subject ${i % 500}, recorded for the inspector benchmark.`,
          beliefType: i % 3 === 0 ? "preference" : "project_fact",
          status: BeliefStatus.ACTIVE,
          confidence: 0.5 + (i % 50) / 100,
          authority: [Authority.USER, Authority.AFFIRMED, Authority.INFERRED][i % 3]!,
          originScope: `project-${i % 7}`,
          scopeLevel: ScopeLevel.PROJECT,
          portability: Portability.CONTEXTUAL,
          recordedAt: at,
          validFrom: at,
          supersedes: i % 10 === 9 && previous ? [previous] : [],
        }),
      );
      previous = id;
    }
    await write.putBeliefs({ beliefs }, { timeoutMs: 60_000 });
  }
  return createClient(InspectService, transport);
}

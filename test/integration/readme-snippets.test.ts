import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";

/**
 * The README's "Ways in" and "Getting memories in" snippets are files that CI runs: each block must
 * be one of those files verbatim (the Python quickstart runs in .ci/run, the Python write example in
 * clients/python/tests/test_writes.py, the MCP host config in mcp-examples.test.ts), the TypeScript
 * programs run here, and so does the curl call against a real sidecar.
 */
const readme = () => readFile("README.md", "utf8");

/** The first fenced block of `lang` after `heading` (a "### …" line) and before the next heading. */
function blockUnder(text: string, heading: string, lang: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `README has no heading "${heading}"`).toBeGreaterThanOrEqual(0);
  const section = text.slice(start + heading.length + 2).split(/\n#{2,3} /)[0]!;
  const match = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(section);
  expect(match, `no \`\`\`${lang} block under "${heading}"`).not.toBeNull();
  return match![1]!;
}

describe("README snippets", () => {
  it.each([
    ["### TypeScript", "ts", "examples/typescript/quickstart.ts"],
    ["### Python", "python", "clients/python/examples/quickstart.py"],
    ["### MCP", "json", "examples/mcp/mcp.json"],
  ])("the %s block is %s verbatim", async (heading, lang, file) => {
    const block = blockUnder(await readme(), heading, lang);
    expect(block).toBe(await readFile(file, "utf8"));
    expect(block.trimEnd().split("\n").length).toBeLessThanOrEqual(20);
  });

  it.each([
    ["ts", "examples/typescript/getting-memories-in.ts"],
    ["python", "clients/python/examples/getting_memories_in.py"],
  ])("the Getting memories in %s block is %s verbatim", async (lang, file) => {
    const block = blockUnder(await readme(), "## Getting memories in", lang);
    expect(block).toBe(await readFile(file, "utf8"));
    expect(block.trimEnd().split("\n").length).toBeLessThanOrEqual(12);
  });

  it("the Getting memories in TypeScript program writes, replaces and recalls the correction", async () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
    try {
      await import("../../examples/typescript/getting-memories-in.js");
    } finally {
      log.mockRestore();
    }
    const out = printed.join("\n");
    expect(out).toMatch(/^correction: \[m:[0-9a-f]{8}\] no longer holds as of .*; superseded by \[m:[0-9a-f]{8}\]\.$/m);
    expect(out).toContain("Andy's editor is Helix.  (user-stated, high)");
    expect(out).not.toContain("Vim");
  });

  it("the TypeScript quickstart runs against a real sidecar", async () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
    try {
      await import("../../examples/typescript/quickstart.js");
    } finally {
      log.mockRestore();
    }
    expect(printed.join("\n")).toContain("[m:8f21a0c3] Andy's editor is Helix.");
  });

  describe("the curl call", () => {
    let sidecar: LocalSidecar;
    beforeAll(async () => {
      const berlin = {
        belief_id: "1c07b2d4-0000-4000-8000-000000000001", subject: "Andy", statement: "Andy works from Berlin and keeps European hours.",
        belief_type: "user_model_attr", status: "BELIEF_STATUS_ACTIVE", confidence: 0.9, authority: "AUTHORITY_USER",
        origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_USER", portability: "PORTABILITY_PORTABLE",
      };
      sidecar = await startLocalSidecar({ fixtures: [{ tenantId: "demo-tenant", principalId: "andy", records: [{ belief: berlin }] }] });
    });
    afterAll(() => sidecar?.stop());

    it("answers as the README shows", async () => {
      const block = blockUnder(await readme(), "### Any gRPC client", "sh");
      const command = block.replaceAll("127.0.0.1:50051", sidecar.address).replace(/\\\n/g, " ");
      const { stdout } = await promisify(execFile)("sh", ["-c", command]);
      expect(JSON.parse(stdout).result.rendered).toContain("Andy works from Berlin");
    });
  });
});

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/sidecar-process.js";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI and resolves with its exit code and output, whatever the code. */
function recall(args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: number | null }).code ?? null) : 0;
      resolve({ code: typeof code === "number" ? code : null, stdout, stderr });
    });
  });
}

const COMMANDS = ["serve", "mcp", "demo", "ui", "import", "health", "eval", "report", "trace", "delete-session", "hints", "promotions", "events", "erase", "sweep"];

/** What a user gets wrong is one line and an exit code, never a stack trace or a half-done action. */
describe("recall CLI usage", () => {
  let dir: string;
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-usage-"));
    dataDir = join(dir, "data");
    // A port nothing listens on: `health` would fail on it, `serve` would bind it.
    env = { PATH: process.env.PATH ?? "", RECALL_PORT: "51501", RECALL_DATA_DIR: dataDir, RECALL_TENANT_ID: "t", RECALL_PRINCIPAL_ID: "p" };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(COMMANDS)("%s --help prints its usage and exits 0 with no side effect", async (command) => {
    const ran = await recall([command, "--help"], env);
    expect(ran).toMatchObject({ code: 0, stderr: "" });
    expect(ran.stdout).toMatch(new RegExp(`^usage: recall ${command}\\b`));
    // No store was opened (serve, demo and the store commands would create the data directory).
    expect(existsSync(dataDir)).toBe(false);
  });

  // npx keeps a link to the bin in its cache and marks it executable only when it makes the link:
  // a rebuilt dist/ (a fresh clone at the same path) must be executable itself, or `npx recall`
  // is "Permission denied".
  it("the built bin runs as a program of its own (it is executable)", async () => {
    const ran = await new Promise<Ran>((resolve) => {
      execFile(CLI, ["--help"], { env, timeout: 30_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { errno?: number }).errno ?? 1) : 0, stdout, stderr: stderr || String(error ?? "") });
      });
    });
    expect(ran).toMatchObject({ code: 0, stderr: "" });
    expect(ran.stdout).toMatch(/^usage: recall /);
  });

  it("--help after other arguments, -h and `recall help COMMAND` answer the same way", async () => {
    const help = (await recall(["import", "--help"], env)).stdout;
    expect(await recall(["import", "some.jsonl", "--tenant", "t", "--help"], env)).toMatchObject({ code: 0, stdout: help });
    expect(await recall(["import", "-h"], env)).toMatchObject({ code: 0, stdout: help });
    expect(await recall(["help", "import"], env)).toMatchObject({ code: 0, stdout: help });
    const overview = await recall(["--help"], env);
    expect(overview.code).toBe(0);
    for (const command of COMMANDS) expect(overview.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  it.each(COMMANDS)("%s with an unknown option is one line on stderr and exit 2", async (command) => {
    const args = command === "eval" ? ["eval", "locomo", "x.json", "--bogus"] : [command, "--bogus"];
    const ran = await recall(args, env);
    expect(ran.code).toBe(2);
    expect(ran.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(new RegExp(`^recall ${command}: .*--bogus.*usage: recall ${command}`))]);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("an unknown command, a missing argument or a bad value is one line and exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /^recall: unknown command "frobnicate"/],
      [["serve", "extra"], /^recall serve: Unexpected argument 'extra'.*; usage: recall serve \[--ephemeral\]$/],
      [["eval"], /^recall eval: name a suite, locomo, benchmark or paraphrase; usage:/],
      [["eval", "locomo"], /^recall eval: the LoCoMo FILE is missing; usage:/],
      [["eval", "locomo", "x.json", "--questions", "many"], /^recall eval: --questions must be a positive integer; usage:/],
      [["eval", "locomo", "x.json", "--semantic-cap", "5"], /^recall eval: --semantic-cap, --semantic-weight, --semantic-fusion, --semantic-normalise, --semantic-lexical-side and --embedding-cache need --semantic; usage:/],
      [["eval", "locomo", "x.json", "--semantic", "--semantic-fusion", "sum"], /^recall eval: --semantic-fusion must be convex or rrf; usage:/],
      [["eval", "locomo", "x.json", "--semantic", "--semantic-weight", "2"], /^recall eval: --semantic-weight must be at most 1 with --semantic-fusion convex \(it is α\); usage:/],
      [["eval", "locomo", "x.json", "--semantic", "--semantic-weight", "0"], /^recall eval: --semantic-weight must be a positive number; usage:/],
      [["trace"], /^recall trace: give one TRACE_ID or --view TURN_ID; usage:/],
      [["trace", "not-a-uuid"], /^recall trace: trace_id: must be a UUID/],
      [["import"], /^recall import: give one FILE; usage: recall import/],
    ];
    for (const [args, line] of cases) {
      const ran = await recall(args, env);
      expect({ args, code: ran.code }).toEqual({ args, code: 2 });
      expect(ran.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(line)]);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a missing file is one line naming it, exit 1, nothing written", async () => {
    const missing = join(dir, "missing.json");
    for (const args of [["eval", "locomo", missing], ["import", missing, "--tenant", "t", "--principal", "p"]]) {
      const ran = await recall(args, env);
      expect(ran.code).toBe(1);
      expect(ran.stderr).not.toMatch(/^\s+at /m);
      expect(ran.stderr).toContain(`cannot read ${missing}: no such file or directory`);
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});

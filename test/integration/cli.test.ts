import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/sidecar-process.js";

const run = promisify(execFile);

/** The CLI's own commands, as a user runs them. */
describe("recall CLI", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-cli-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "", RECALL_PORT: "0", RECALL_DATA_DIR: join(dir, "data"), ...extra });

  it("demo --once loads the demo memory and prints a snapshot and an in-turn block over gRPC", async () => {
    const { stdout, stderr } = await run(process.execPath, [CLI, "demo", "--once"], { env: env(), timeout: 60_000 });
    // A clean run warns of nothing: no slow trace write, no index load racing the stop. (On an
    // overloaded machine the health probe may still say so at error: not this test's subject.)
    const warned = (s: string) => s.split("\n").filter((l) => l.includes('"level":40'));
    expect(warned(stderr)).toEqual([]);
    const [snapshot, inTurn] = stdout.split("== in-turn recall");
    // Snapshot: durable user beliefs; never the superseded editor, the provisional guess, or the persona-held belief.
    expect(snapshot).toContain("[m:8f21a0c3] Andy prefers concise, prose-first writing.  (user-stated, high)");
    expect(snapshot).toContain("[m:9d02b117] Andy's editor is Helix.");
    expect(snapshot).not.toContain("Vim");
    expect(snapshot).not.toContain("Rust");
    expect(snapshot).not.toContain("maintainer");
    // In-turn: the conflict shown as a conflict, the poisoned belief blocked, the carried belief attributed.
    expect(inTurn).toContain("conflicts=[m:c0ffee02]");
    expect(inTurn).toContain("conflicts=[m:c0ffee01]");
    expect(inTurn).toContain("[m:0d3e9a11] [BLOCKED] withheld: failed injection scan.");
    expect(inTurn).not.toContain("attacker");
    expect(inTurn).toContain("[m:7ea51c2d] (learned in atlas) Deploys are gated on CI passing on main.");
    // The local atlas staging address never leaks into a veetbot session that did not ask for it.
    expect(stdout).not.toContain("db.staging.atlas.internal");
    expect(stdout.match(/^trace [0-9a-f-]{36}$/gm)).toHaveLength(2);

    // The demo principal's memory changed between runs (here a belief imported beside it, as a
    // rejection in the inspector would change it): the next run erases it, loads the demo again and
    // renders the same bytes.
    const extra = join(dir, "extra.jsonl");
    const belief = { belief_id: "b2000000-0000-4000-8000-000000000001", subject: "Andy", statement: "Andy's editor is Emacs now.", belief_type: "preference", status: "BELIEF_STATUS_ACTIVE", confidence: 0.9, authority: "AUTHORITY_USER", origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" };
    await writeFile(extra, JSON.stringify({ belief }) + "\n");
    await run(process.execPath, [CLI, "import", extra, "--tenant", "demo-tenant", "--principal", "andy"], { env: env(), timeout: 60_000 });
    const again = await run(process.execPath, [CLI, "demo", "--once"], { env: env(), timeout: 60_000 });
    // The same lines; as_of is the time of the load (the README shows it as "…").
    const blocks = (s: string) =>
      s.split("\n").filter((l) => !l.startsWith("trace ") && !l.startsWith("recall demo:") && !l.startsWith("arm ")).map((l) => l.replace(/as_of="[^"]+"/, 'as_of="…"'));
    expect(blocks(again.stdout)).toEqual(blocks(stdout));
    expect(again.stdout).not.toContain("Emacs");
    expect(warned(again.stderr)).toEqual([]);

    // The snapshot report reads those recalls' traces: one session, three snapshot beliefs, none cited yet.
    const report = await run(process.execPath, [CLI, "report", "snapshots", "--tenant", "demo-tenant", "--principal", "andy"], { env: env() });
    const parsed = JSON.parse(report.stdout) as { sessions: { sessionId: string; snapshotSize: number; cited: number; utilization: number }[] };
    expect(parsed.sessions).toEqual([
      expect.objectContaining({ sessionId: "demo-session-1", snapshotSize: 3, cited: 0, utilization: 0 }),
    ]);
    // Two demo processes, each opening PGlite (seconds apiece on a busy two-core machine).
  }, 120_000);

  it("demo --reset wipes a data directory holding only the demo's memory, and refuses one holding others'", async () => {
    const data = join(dir, "reset-data");
    const resetEnv = env({ RECALL_DATA_DIR: data });
    await run(process.execPath, [CLI, "demo", "--once"], { env: resetEnv, timeout: 60_000 });
    await writeFile(join(data, "left-behind"), "x");
    const reset = await run(process.execPath, [CLI, "demo", "--once", "--reset"], { env: resetEnv, timeout: 60_000 });
    expect(reset.stdout).toContain(`recall demo: ${data} wiped; starting on an empty store`);
    expect(reset.stdout).toContain("[m:9d02b117] Andy's editor is Helix.");
    await expect(readFile(join(data, "left-behind"))).rejects.toMatchObject({ code: "ENOENT" });
    // Made again private, as the sidecar wants its data directory.
    expect((await stat(data)).mode & 0o777).toBe(0o700);

    // Another principal's memory in the directory: not wiped, exit 2, saying why.
    const other = join(dir, "other.jsonl");
    const belief = { belief_id: "b3000000-0000-4000-8000-000000000001", subject: "storage", statement: "We store memory in Postgres.", belief_type: "decision", status: "BELIEF_STATUS_ACTIVE", confidence: 0.8, authority: "AUTHORITY_USER", origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" };
    await writeFile(other, JSON.stringify({ belief }) + "\n");
    await run(process.execPath, [CLI, "import", other, "--tenant", "t1", "--principal", "p1"], { env: resetEnv, timeout: 60_000 });
    const refused = await run(process.execPath, [CLI, "demo", "--once", "--reset"], { env: resetEnv, timeout: 60_000 }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr).toContain("holds the memory of 1 principal(s) besides demo-tenant/andy; not wiped");
  }, 180_000);

  it("import validates the whole file first, then writes beliefs and episodes", async () => {
    const good = join(dir, "good.jsonl");
    const lines = [
      { episode: { episode_id: "e1000000-0000-4000-8000-000000000001", session_id: "s", occurred_at: "2026-01-02T10:00:00Z", content: "We chose Postgres." } },
      { belief: { belief_id: "b1000000-0000-4000-8000-000000000001", subject: "storage", statement: "We store memory in Postgres.", belief_type: "decision", status: "BELIEF_STATUS_ACTIVE", confidence: 0.8, authority: "AUTHORITY_USER", origin_scope: "veetbot", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL", source_episode_ids: ["e1000000-0000-4000-8000-000000000001"] } },
    ];
    await writeFile(good, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const args = [CLI, "import", good, "--tenant", "t1", "--principal", "p1"];
    const { stdout } = await run(process.execPath, args, { env: env({ RECALL_DATA_DIR: join(dir, "import-data") }), timeout: 60_000 });
    expect(stdout).toContain("imported 1 beliefs (1 new or changed) and 1 episodes (1 new) from recall");

    const bad = join(dir, "bad.jsonl");
    await writeFile(
      bad,
      [JSON.stringify(lines[1]), JSON.stringify({ belief: { ...lines[1]!.belief, belief_id: "not-a-uuid" } }), "{not json", JSON.stringify({ note: 1 })].join("\n"),
    );
    const err = await run(process.execPath, [CLI, "import", bad, "--tenant", "t1", "--principal", "p1"], {
      env: env({ RECALL_DATA_DIR: join(dir, "import-data") }),
    }).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 1 });
    expect((err as { stderr: string }).stderr).toContain("bad.jsonl:2: belief.belief_id: must be a UUID");
    // Every bad line is reported, not only the first.
    expect((err as { stderr: string }).stderr).toMatch(/bad\.jsonl:3: .*JSON/);
    expect((err as { stderr: string }).stderr).toContain('bad.jsonl:4: line: must hold a "belief" or an "episode" object');
    expect((err as { stderr: string }).stderr).toContain("3 bad records; nothing was written");
  });

  it("eval benchmark exits 1 with the per-field diff when the baseline differs; --record refuses a triple regression without a reason", async () => {
    const fixture = new URL("../fixtures/benchmark/fixture.json", import.meta.url).pathname;
    const committed = await readFile(new URL("../fixtures/benchmark/baseline.json", import.meta.url), "utf8");
    const baseline = join(dir, "baseline.json");
    await writeFile(baseline, committed.replace(/"noiseRatio": [0-9.]+/, '"noiseRatio": 0.01'));
    const args = [CLI, "eval", "benchmark", "--fixture", fixture, "--baseline", baseline];
    const err = await run(process.execPath, args, { env: env(), timeout: 120_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(err).toMatchObject({ code: 1 });
    expect((err as { stderr: string }).stderr).toMatch(/^ {2}metrics\.noiseRatio: 0\.01 → [0-9.]+$/m);
    expect((err as { stderr: string }).stderr).toContain("npm run eval -- --record");
    expect((err as { stdout: string }).stdout).toContain("consequential recall@5");

    // Measured noise is above the (tampered) committed 0.01: a regression, not recorded without a reason.
    const refused = await run(process.execPath, [...args, "--record"], { env: env(), timeout: 120_000 }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toMatch(/^ {2}noise ratio rose: 0\.01 → [0-9.]+$/m);
    await run(process.execPath, [...args, "--record", "--accept-regression", "test"], { env: env(), timeout: 120_000 });
    const recorded = JSON.parse(await readFile(baseline, "utf8")) as { acceptedRegressions: string[] };
    expect(recorded.acceptedRegressions).toEqual([expect.stringMatching(/^noise ratio rose: 0\.01 → [0-9.]+: test$/)]);
    expect({ ...recorded, acceptedRegressions: [] }).toEqual(JSON.parse(committed));
  });

  it("eval locomo runs the real pipeline on a LoCoMo-format file and reports beside BM25", async () => {
    // A small synthetic conversation pair in the LoCoMo format (the real file is the user's input).
    const file = new URL("../fixtures/locomo/synthetic.json", import.meta.url).pathname;
    type Report = { conversations: number; questions: number; skippedQuestions: number; results: Record<string, Record<string, Record<string, { frac: number; noise: number; questions: number }>>> };
    const full = JSON.parse((await run(process.execPath, [CLI, "eval", "locomo", file, "--json"], { env: env(), timeout: 120_000 })).stdout) as Report;
    // Two conversations; the question whose evidence is empty is skipped, the malformed ids ("D2:1; D1:2", "D:1:5") are read.
    expect(full).toMatchObject({ conversations: 2, questions: 11, skippedQuestions: 1 });
    expect(full.results["5"]!.recall!["5"]!.questions).toBe(1);
    const recall = full.results["1-4"]!.recall!;
    const bm25 = full.results["1-4"]!.bm25!;
    expect(recall["5"]!.questions).toBe(10);
    // Each question names words of its evidence: a working pipeline finds nearly all of it, a broken one none.
    expect(recall["10"]!.frac).toBeGreaterThan(0.8);
    expect(bm25["10"]!.frac).toBeGreaterThan(0.8);
    for (const k of ["5", "10", "20"]) {
      expect(recall[k]!.frac).toBeGreaterThanOrEqual(0);
      expect(recall[k]!.frac).toBeLessThanOrEqual(1);
    }

    // A slice: the first conversation, its first three questions.
    const slice = JSON.parse((await run(process.execPath, [CLI, "eval", "locomo", file, "--conversations", "1", "--questions", "3", "--json"], { env: env(), timeout: 120_000 })).stdout) as Report;
    expect(slice).toMatchObject({ conversations: 1, questions: 3 });

    // The semantic arm (hashed embedder, RECALL_SEMANTIC off) at a tuned cap and weight (convex fusion: the weight is alpha), named in the report.
    const tuned = JSON.parse(
      (await run(process.execPath, [CLI, "eval", "locomo", file, "--conversations", "1", "--questions", "3", "--semantic", "--semantic-cap", "5", "--semantic-weight", "0.5", "--json"], { env: env(), timeout: 120_000 })).stdout,
    ) as Report & { semantic: string };
    expect(tuned.semantic).toBe("hashed@1:256 (cap 5, convex min-max (other arms by scores), alpha 0.5)");
  });
});

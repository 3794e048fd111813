import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity, ts } from "../support/grpc-fixtures.js";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * `recall import --address/--socket` into a running `recall serve`, on both
 * stores: files made here in each peer's documented shape (mem0 get_all(),
 * Graphiti entity edges, chat transcripts), imported, then read back over
 * gRPC as docs/importing.md says they map.
 */

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function recall(args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "", RECALL_LOG_LEVEL: "warn", ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const lines = (records: readonly unknown[]) => records.map((r) => JSON.stringify(r)).join("\n") + "\n";

describe.each(["pglite", "postgres"] as const)("recall import into a running sidecar (%s)", (kind) => {
  let dir: string;
  let socket: string;
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-import-"));
    socket = join(dir, "recall.sock");
    sidecar = await startSidecarProcess(kind, { RECALL_SOCKET_PATH: socket });
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  const into = (me: { tenant: string; principal: string }) => ["--address", sidecar.address, "--tenant", me.tenant, "--principal", me.principal];
  const listed = async (me: Json) => (await unary(c.inspect, "ListBeliefs", { page_size: 200 }, me)).beliefs.map((b: Json) => b as Json);
  const recalled = async (me: Json, query: Json) => {
    const events = await serverStream(c.memory, "Recall", { query }, me);
    return events[events.length - 1]!.result as Json;
  };

  it("a mem0 get_all() export: one user's memories become beliefs about that user, recalled by subject", async () => {
    const me = newIdentity("mem0");
    const memory = (id: string, text: string, user: string, over: Json = {}) => ({ id, memory: text, hash: "h", metadata: null, created_at: "2026-03-01T10:00:00.123456-08:00", updated_at: null, user_id: user, ...over });
    const path = await file(
      `mem0-${kind}.json`,
      pretty({
        results: [
          memory("3c90c3cc-0d44-4b50-8888-8dd25736052a", "Is a vegetarian", "alex"),
          memory("4d90c3cc-0d44-4b50-8888-8dd25736052b", "Prefers window seats on flights", "alex", { updated_at: "2026-04-01T09:00:00-07:00", metadata: { topic: "travel" } }),
          memory("5e90c3cc-0d44-4b50-8888-8dd25736052c", "Plays the cello", "sam"),
        ],
        relations: [],
      }),
    );
    // Two users' memories into one principal would mix them: refused until one is chosen.
    const refused = await recall(["import", path, ...into(me)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("holds the memory of 2 users or groups (alex, sam); give --user ID");
    const ran = await recall(["import", path, "--user", "alex", "--scope", "travel-bot", ...into(me)]);
    expect(ran.stderr).toContain("left out 1 memories of another user than alex");
    expect(ran.stdout).toBe("imported 2 beliefs (2 new or changed) and 0 episodes (0 new) from mem0\n");

    const beliefs = await listed(me);
    const seat = beliefs.find((b: Json) => b.belief.statement === "Prefers window seats on flights")!.belief;
    expect(seat).toMatchObject({ belief_id: "4d90c3cc-0d44-4b50-8888-8dd25736052b", subject: "alex", belief_type: "user_model_attr", status: "BELIEF_STATUS_ACTIVE", authority: "AUTHORITY_INFERRED", origin_scope: "travel-bot", scope_level: "SCOPE_LEVEL_USER", portability: "PORTABILITY_PORTABLE" });
    expect(seat.valid_from).toEqual({ seconds: String(Date.parse("2026-03-01T18:00:00.123Z") / 1000 | 0), nanos: 123_000_000 });
    expect(seat.recorded_at).toEqual(ts("2026-04-01T16:00:00Z"));
    expect(beliefs.map((b: Json) => b.belief.statement)).not.toContain("Plays the cello");
    const result = await recalled(me, { text: "is alex vegetarian", subjects: ["alex"] });
    expect(result.rendered).toContain("Is a vegetarian");

    // Importing the same export again writes nothing new: the ids are mem0's.
    const again = await recall(["import", path, "--user", "alex", "--scope", "travel-bot", ...into(me)]);
    expect(again.stdout).toBe("imported 2 beliefs (0 new or changed) and 0 episodes (0 new) from mem0\n");
  }, 120_000);

  it("Graphiti entity edges: an invalidated edge is superseded by the one that replaced it, and still held in the past", async () => {
    const me = newIdentity("graphiti");
    const [alice, acme, globex, old, next, episode] = ["a1", "a2", "a3", "e1", "e2", "c1"].map((x) => `${x}000000-0000-4000-8000-000000000001`) as [string, string, string, string, string, string];
    const node = (uuid: string, name: string) => ({ uuid, name, group_id: "g", labels: ["Entity"], created_at: "2026-01-01T00:00:00Z", summary: "", name_embedding: null, attributes: {} });
    const edge = (over: Json) => ({ uuid: old, group_id: "g", source_node_uuid: alice, target_node_uuid: acme, created_at: "2026-01-05T00:00:00Z", name: "WORKS_AT", fact: "Alice works at Acme.", fact_embedding: null, episodes: [episode], expired_at: null, valid_at: "2026-01-01T00:00:00Z", invalid_at: null, attributes: {}, ...over });
    const path = await file(
      `graphiti-${kind}.json`,
      pretty({
        nodes: [node(alice, "Alice"), node(acme, "Acme"), node(globex, "Globex")],
        episodes: [{ uuid: episode, name: "m1", group_id: "g", source: "message", source_description: "chat", content: "user: I work at Acme now", valid_at: "2026-01-01T00:00:00Z", created_at: "2026-01-05T00:00:00Z", entity_edges: [old] }],
        edges: [
          edge({ expired_at: "2026-03-02T00:00:00Z", invalid_at: "2026-03-01T00:00:00Z" }),
          edge({ uuid: next, target_node_uuid: globex, fact: "Alice works at Globex.", created_at: "2026-03-02T00:00:00Z", valid_at: "2026-03-01T00:00:00Z", episodes: [] }),
        ],
      }),
    );
    const ran = await recall(["import", path, "--session", "graph", ...into(me)]);
    expect(ran.stdout).toBe("imported 3 beliefs (3 new or changed) and 1 episodes (1 new) from graphiti\n");

    const now = await recalled(me, { text: "where does Alice work", subjects: ["Alice"] });
    expect(now.rendered).toContain("Alice works at Globex.");
    expect(now.rendered).not.toContain("Acme");
    const then = await recalled(me, { text: "where does Alice work", subjects: ["Alice"], as_of: ts("2026-02-01T00:00:00Z") });
    expect(then.rendered).toContain("Alice works at Acme.");
    expect(then.rendered).not.toContain("Globex");
    const oldRow = (await listed(me)).find((b: Json) => b.belief.belief_id === old)!;
    expect(oldRow.belief).toMatchObject({ status: "BELIEF_STATUS_SUPERSEDED", source_episode_ids: [episode], retracted_at: ts("2026-03-02T00:00:00Z") });
    expect(oldRow.superseded_by).toEqual([next]);
    const episodes = await unary(c.memory, "RecallEpisodes", { session_id: "graph" }, me);
    expect(episodes.episodes.map((e: Json) => e.content)).toEqual(["user: I work at Acme now"]);
  }, 120_000);

  it("transcripts: JSON Lines of role/content/time and OpenAI messages become episodes, in order, through the Unix socket", async () => {
    const me = newIdentity("chat");
    const jsonl = await file(
      `chat-${kind}.jsonl`,
      lines([
        { role: "system", content: "You are a travel agent." },
        { role: "user", content: "Book me a train to Porto.", time: "2026-02-01T10:00:00Z" },
        { role: "assistant", content: "Booked the 9:05 to Porto.", time: "2026-02-01T10:00:07Z" },
      ]),
    );
    const ran = await recall(["import", jsonl, "--socket", socket, "--tenant", me.tenant, "--principal", me.principal, "--session", "trip"]);
    expect(ran.stdout).toBe("imported 0 beliefs (0 new or changed) and 2 episodes (2 new) from transcript\n");
    expect(ran.stderr).toContain("left out 1 system messages");
    const openai = await file(`openai-${kind}.json`, pretty([{ role: "user", content: [{ type: "text", text: "And a hotel?" }] }, { role: "assistant", content: "Hotel Infante, two nights." }]));
    await recall(["import", openai, "--session", "trip-2", "--at", "2026-02-02T08:00:00Z", ...into(me)]);

    const trip = await unary(c.memory, "RecallEpisodes", { session_id: "trip" }, me);
    expect(trip.episodes.map((e: Json) => [e.actor, e.kind, e.content, e.occurred_at])).toEqual([
      ["user", "message", "Book me a train to Porto.", ts("2026-02-01T10:00:00Z")],
      ["assistant", "message", "Booked the 9:05 to Porto.", ts("2026-02-01T10:00:07Z")],
    ]);
    const trip2 = await unary(c.memory, "RecallEpisodes", { session_id: "trip-2" }, me);
    expect(trip2.episodes.map((e: Json) => [e.content, e.occurred_at, e.sequence])).toEqual([
      ["And a hotel?", ts("2026-02-02T08:00:00Z"), "0"],
      ["Hotel Infante, two nights.", ts("2026-02-02T08:00:00Z"), "1"],
    ]);
  }, 120_000);

  it("bad records: reported by line, and either nothing is written or the others are", async () => {
    const me = newIdentity("bad");
    const good = (id: string, text: string) => ({ id, memory: text, created_at: "2026-03-01T10:00:00Z", user_id: "alex" });
    const path = await file(`bad-${kind}.json`, pretty([good("6f90c3cc-0d44-4b50-8888-8dd25736052a", "Lives in Porto"), { id: "x", user_id: "alex", created_at: "soon" }, good("7f90c3cc-0d44-4b50-8888-8dd25736052a", "Speaks Portuguese")]));
    const stopped = await recall(["import", path, ...into(me)]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain(`${path}:8: [1].created_at: must be a time (RFC 3339), not "soon"`);
    expect(stopped.stderr).toContain("1 bad records; nothing was written");
    expect(await listed(me)).toEqual([]);

    const skipped = await recall(["import", path, "--on-error", "skip", ...into(me)]);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toBe("imported 2 beliefs (2 new or changed) and 0 episodes (0 new) from mem0; 1 bad records skipped\n");
    expect((await listed(me)).map((b: Json) => b.belief.statement).sort()).toEqual(["Lives in Porto", "Speaks Portuguese"]);
  }, 120_000);

  it("a PutBeliefs batch is atomic: one bad belief and none of the batch is written", async () => {
    const me = newIdentity("atomic");
    const bad = await failure(unary(c.write, "PutBeliefs", { beliefs: [beliefMsg(), beliefMsg(), beliefMsg({ confidence: 3 })] }, me));
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).toContain("beliefs[2].confidence");
    expect(await listed(me)).toEqual([]);
  });

  it("an interrupted import continues from its position file: every message once, none lost", async () => {
    const me = newIdentity("resume");
    const total = 1000;
    const messages = Array.from({ length: total }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message number ${i}`, time: new Date(Date.UTC(2026, 1, 1, 0, 0, i)).toISOString() }));
    const path = await file(`long-${kind}.jsonl`, lines(messages));
    const position = join(dir, `long-${kind}.position`);
    const args = [CLI, "import", path, "--resume", position, "--batch-size", "2", "--session", "long", ...into(me)];
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? "", RECALL_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    // Interrupted once some batches are acknowledged.
    for (let done = 0; done < 20; await new Promise((r) => setTimeout(r, 10))) {
      done = await readFile(position, "utf8").then((t) => (JSON.parse(t) as { done: number }).done, () => 0);
    }
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);
    const { done } = JSON.parse(await readFile(position, "utf8")) as { done: number };
    expect(done).toBeLessThan(total);
    expect(stderr).toContain(`interrupted after ${done} of ${total} records; run again with --resume ${position} to continue`);
    expect((await stat(position)).mode & 0o777).toBe(0o600);

    const resumed = await recall(args.slice(1));
    expect(resumed.stdout).toBe(`imported 0 beliefs (0 new or changed) and ${total} episodes (${total - done} new) from transcript (the first ${done} records by an earlier run)\n`);
    const contents: string[] = [];
    for (let token = ""; ; ) {
      const page = await unary(c.memory, "RecallEpisodes", { session_id: "long", page_size: 500, budget_tokens: 16_000, page_token: token }, me);
      contents.push(...page.episodes.map((e: Json) => e.content as string));
      token = page.next_page_token;
      if (!token) break;
    }
    expect(contents).toEqual(messages.map((m) => m.content));
    // A position for another file is refused, not applied.
    const other = await file(`other-${kind}.jsonl`, lines(messages.slice(0, 3)));
    const refused = await recall(["import", other, "--resume", position, ...into(me)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("belongs to another import");
  }, 180_000);
});

describe("recall import straight into a store (no sidecar running)", () => {
  it("writes a Graphiti dump into PGlite and PostgreSQL, and a second run writes nothing new", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recall-import-direct-"));
    const database = await freshPostgresDatabase();
    try {
      const edge = { uuid: "e9000000-0000-4000-8000-000000000001", group_id: "g", source_node_uuid: "n1", target_node_uuid: "n2", created_at: "2026-01-05T00:00:00Z", name: "LIKES", fact: "Bo likes jazz.", episodes: [], expired_at: null, valid_at: null, invalid_at: null };
      const path = join(dir, "edges.jsonl");
      await writeFile(path, lines([edge]));
      const stores: Record<string, string>[] = [{ RECALL_DATA_DIR: join(dir, "data") }, { RECALL_DATABASE_URL: database.url }];
      for (const env of stores) {
        const args = ["import", path, "--subject", "Bo", "--tenant", "t", "--principal", "p"];
        expect((await recall(args, env)).stdout).toBe("imported 1 beliefs (1 new or changed) and 0 episodes (0 new) from graphiti\n");
        expect((await recall(args, env)).stdout).toBe("imported 1 beliefs (0 new or changed) and 0 episodes (0 new) from graphiti\n");
      }
    } finally {
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe("recall import --token-file into a jwt-mode sidecar", () => {
  const SECRET = "an-hmac-secret-of-at-least-32-characters!";
  const token = (sub: string) =>
    new SignJWT({ tenant_id: "acme", sub }).setProtectedHeader({ alg: "HS256" }).setIssuer("https://issuer.example").setAudience("recall").setExpirationTime("5m").sign(new TextEncoder().encode(SECRET));

  it("writes as the token's principal, and only that principal sees the records", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recall-import-jwt-"));
    const sidecar = await startSidecarProcess("pglite", { RECALL_IDENTITY: "jwt", RECALL_JWT_SECRET: SECRET, RECALL_JWT_ISSUER: "https://issuer.example", RECALL_JWT_AUDIENCE: "recall" });
    const c = connect(sidecar.address);
    try {
      const andy = await token("andy");
      const tokenFile = join(dir, "token");
      await writeFile(tokenFile, `${andy}\n`);
      const path = join(dir, "chat.jsonl");
      await writeFile(path, lines([{ role: "user", content: "My locker is number 41.", time: "2026-02-01T10:00:00Z" }]));
      const ran = await recall(["import", path, "--address", sidecar.address, "--token-file", tokenFile, "--session", "gym"]);
      expect(ran.stdout).toBe("imported 0 beliefs (0 new or changed) and 1 episodes (1 new) from transcript\n");
      const mine = await unary(c.memory, "RecallEpisodes", { session_id: "gym" }, { token: andy });
      expect(mine.episodes.map((e: Json) => e.content)).toEqual(["My locker is number 41."]);
      const theirs = await unary(c.memory, "RecallEpisodes", { session_id: "gym" }, { token: await token("bob") });
      expect(theirs.episodes).toEqual([]);
    } finally {
      c.close();
      expect(await sidecar.stop()).toBe(0);
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formFromTurn, type ChatMessage } from "../../examples/typescript/formation-loop.js";
import { createRecallClient, type RecallClient } from "../../src/sdk/index.js";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";

/**
 * examples/typescript/formation-loop.ts against a real sidecar and a stand-in for an
 * OpenAI-compatible chat endpoint on loopback (no model is reachable in CI): the stand-in answers
 * with canned operations and records what it was asked.
 */

interface Asked {
  authorization: string | undefined;
  body: { model: string; messages: ChatMessage[]; response_format: unknown };
}

describe("the formation loop example", () => {
  let sidecar: LocalSidecar;
  let chat: Server;
  let baseUrl: string;
  const asked: Asked[] = [];
  let answer = "";
  let memory: RecallClient;

  beforeAll(async () => {
    sidecar = await startLocalSidecar({ identity: { tenantId: "acme", principalId: "andy" } });
    chat = createServer(async (req: IncomingMessage, res) => {
      let raw = "";
      for await (const chunk of req) raw += String(chunk);
      asked.push({ authorization: req.headers.authorization, body: JSON.parse(raw) as Asked["body"] });
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content: answer } }] }));
    });
    await new Promise<void>((resolve) => chat.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(chat.address() as AddressInfo).port}/v1`;
    memory = createRecallClient({ address: sidecar.address, tenantId: "acme", principalId: "andy", scope: "veetbot" });
  });
  afterAll(async () => {
    memory?.close();
    await new Promise((resolve) => chat?.close(resolve));
    await sidecar?.stop();
  });

  it("turns a turn into remember and replace calls, and skips what it cannot check", async () => {
    const vim = await memory.remember("Andy", "Andy's editor is Vim.");
    const session = await memory.openSession({ scope: "veetbot" });
    const turn = await session.recallForTurn({ turnId: "t-1", text: "which editor do I use?", subjects: ["Andy"] });
    const shown = /\[m:[0-9a-f]+\] Andy's editor is Vim\./.exec(turn.rendered)![0].split(" ")[0]!;

    answer = JSON.stringify({
      operations: [
        { op: "remember", subject: "Andy", statement: "Andy lives in Lisbon." },
        { op: "replace", id: shown, statement: "Andy's editor is Helix." },
        { op: "replace", id: "[m:deadbeef]", statement: "Not shown, not replaced." },
        { op: "forget", statement: "x" },
        { op: "remember", statement: "no subject" },
      ],
    });
    const messages: ChatMessage[] = [
      { role: "user", content: "I moved to Lisbon, and I switched from Vim to Helix last week." },
      { role: "assistant", content: "Noted! Helix it is." },
    ];
    const outcomes = await formFromTurn({ memory, baseUrl, model: "stand-in", apiKey: "k", messages, recalled: turn.result });

    expect(outcomes.map((o) => (o.op === "skipped" ? `skipped: ${o.reason}` : o.op))).toEqual([
      "remember",
      "replace",
      "skipped: replace names no memory this turn was shown",
      "skipped: unknown op",
      "skipped: no subject",
    ]);
    expect(outcomes[1]).toMatchObject({ op: "replace", replaced: vim.beliefId });
    // The endpoint was asked as OpenAI's chat API is, with the turn and the block it was answered with.
    expect(asked).toHaveLength(1);
    expect(asked[0]!.authorization).toBe("Bearer k");
    expect(asked[0]!.body).toMatchObject({ model: "stand-in", response_format: { type: "json_object" } });
    expect(asked[0]!.body.messages[1]!.content).toContain(`${shown} Andy's editor is Vim.`);
    expect(asked[0]!.body.messages[1]!.content).toContain("user: I moved to Lisbon");

    const found = (await memory.search("where does Andy live and which editor", { subjects: ["Andy"] })).result!;
    expect(found.rendered).toContain("Andy lives in Lisbon.  (inferred, medium)");
    expect(found.rendered).toContain("Andy's editor is Helix.");
    expect(found.rendered).not.toContain("Vim");
  });

  it("writes nothing when the model's answer is not the JSON asked for", async () => {
    answer = "Sure! Here are some memories: Andy likes tea.";
    const before = (await memory.search("tea")).result!.items.length;
    expect(await formFromTurn({ memory, baseUrl, model: "stand-in", messages: [{ role: "user", content: "I like tea." }] })).toEqual([]);
    expect((await memory.search("tea")).result!.items.length).toBe(before);
  });
});

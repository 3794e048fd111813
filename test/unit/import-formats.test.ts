import { describe, expect, it } from "vitest";
import { checkRecords } from "../../src/cli/import/checked-records.js";
import { mapFile } from "../../src/cli/import/formats.js";
import { elementLines } from "../../src/cli/import/json-positions.js";
import type { MappingOptions } from "../../src/cli/import/peer-record.js";
import { stableUuid } from "../../src/cli/import/stable-id.js";

/** The import mappings, pure: files made here in each peer's documented shape. */

const NOW = new Date("2026-06-01T00:00:00Z");
const OPTIONS: MappingOptions = { scope: "imported", session: "chat", at: new Date("2026-01-01T00:00:00Z"), now: NOW };
const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const beliefs = (text: string, options: Partial<MappingOptions> = {}) => {
  const { mapped } = mapFile(text, { ...OPTIONS, ...options });
  return { mapped, checked: checkRecords(mapped.records, mapped.rejected, NOW) };
};

const MEM0_ID = "3c90c3cc-0d44-4b50-8888-8dd25736052a";
const mem0Memory = (over: Record<string, unknown> = {}) => ({
  id: MEM0_ID,
  memory: "Is a vegetarian",
  hash: "b2a8f4…",
  metadata: { source: "onboarding" },
  created_at: "2026-03-01T10:00:00.123456-08:00",
  updated_at: "2026-04-01T09:00:00-08:00",
  user_id: "alex",
  ...over,
});

describe("mem0", () => {
  it("maps get_all()'s v1.1 results and the older bare list to the same beliefs", () => {
    const v11 = beliefs(pretty({ results: [mem0Memory()] }));
    const v10 = beliefs(pretty([mem0Memory()]));
    expect(v11.checked.rejected).toEqual([]);
    expect(v11.checked.beliefs.map((b) => b.value)).toEqual(v10.checked.beliefs.map((b) => b.value));
    const [belief] = v11.checked.beliefs.map((b) => b.value);
    expect(belief).toMatchObject({
      beliefId: MEM0_ID,
      subject: "alex",
      statement: "Is a vegetarian",
      beliefType: "user_model_attr",
      status: "active",
      authority: "inferred",
      confidence: 0.7,
      originScope: "imported",
      scopeLevel: "user",
      portability: "portable",
      validFrom: new Date("2026-03-01T18:00:00.123Z"),
      recordedAt: new Date("2026-04-01T17:00:00Z"),
      lastEvidenceAt: new Date("2026-04-01T17:00:00Z"),
    });
  });

  it("reports a bad memory by its line and mem0 path; flags override the defaults", () => {
    const text = pretty({ results: [mem0Memory(), mem0Memory({ id: "m-2", memory: "" }), mem0Memory({ id: "m-3", created_at: "yesterday" })] });
    const { checked } = beliefs(text);
    expect(checked.rejected).toEqual([
      { line: 14, message: "results[1].memory: is required" },
      { line: 25, message: 'results[2].created_at: must be a time (RFC 3339), not "yesterday"' },
    ]);
    const over = beliefs(pretty([mem0Memory({ id: "not-a-uuid" })]), { subject: "Alex", authority: "AUTHORITY_USER", confidence: 0.9, beliefType: "preference" });
    expect(over.checked.beliefs[0]!.value).toMatchObject({ beliefId: stableUuid("mem0", "not-a-uuid"), subject: "Alex", authority: "user", confidence: 0.9, beliefType: "preference" });
  });

  it("knows whose memories they are: several users are seen, --user keeps one", () => {
    const text = pretty({ results: [mem0Memory(), mem0Memory({ id: "m-2", user_id: "sam" })] });
    expect([...beliefs(text).mapped.owners]).toEqual(["alex", "sam"]);
    const one = beliefs(text, { user: "sam" });
    expect(one.checked.beliefs.map((b) => b.value.subject)).toEqual(["sam"]);
    expect([...one.mapped.leftOut.values()]).toEqual([1]);
  });
});

const node = (uuid: string, name: string) => ({ uuid, name, group_id: "g", labels: ["Entity"], created_at: "2026-01-01T00:00:00Z", summary: "" });
const ALICE = "a0000000-0000-4000-8000-000000000001";
const ACME = "a0000000-0000-4000-8000-000000000002";
const GLOBEX = "a0000000-0000-4000-8000-000000000003";
const OLD = "e0000000-0000-4000-8000-000000000001";
const NEW = "e0000000-0000-4000-8000-000000000002";
const EPISODE = "c0000000-0000-4000-8000-000000000001";
const edge = (over: Record<string, unknown>) => ({
  uuid: OLD,
  group_id: "g",
  source_node_uuid: ALICE,
  target_node_uuid: ACME,
  created_at: "2026-01-05T00:00:00Z",
  name: "WORKS_AT",
  fact: "Alice works at Acme.",
  fact_embedding: null,
  episodes: [EPISODE],
  expired_at: null,
  valid_at: "2026-01-01T00:00:00Z",
  invalid_at: null,
  attributes: {},
  ...over,
});
const graphitiDump = () => ({
  nodes: [node(ALICE, "Alice"), node(ACME, "Acme"), node(GLOBEX, "Globex")],
  episodes: [{ uuid: EPISODE, name: "msg 1", group_id: "g", source: "message", source_description: "chat", content: "user: I work at Acme", valid_at: "2026-01-01T00:00:00Z", created_at: "2026-01-05T00:00:00Z", entity_edges: [OLD] }],
  edges: [
    // Graphiti invalidated it when the newer edge arrived: invalid_at = the new edge's valid_at, expired_at = when it noticed.
    edge({ expired_at: "2026-03-02T00:00:00Z", invalid_at: "2026-03-01T00:00:00Z" }),
    edge({ uuid: NEW, target_node_uuid: GLOBEX, fact: "Alice works at Globex.", created_at: "2026-03-02T00:00:00Z", valid_at: "2026-03-01T00:00:00Z", episodes: [] }),
  ],
});

describe("Graphiti / Zep entity edges", () => {
  it("map valid time, transaction time and supersession", () => {
    const { checked } = beliefs(pretty(graphitiDump()));
    expect(checked.rejected).toEqual([]);
    expect(checked.episodes.map((e) => e.value)).toEqual([
      expect.objectContaining({ episodeId: EPISODE, sessionId: "chat", kind: "message", content: "user: I work at Acme", occurredAt: new Date("2026-01-01T00:00:00Z") }),
    ]);
    const byId = new Map(checked.beliefs.map((b) => [b.value.beliefId, b.value]));
    const closed = stableUuid("graphiti", OLD, "closed");
    // As recorded from created_at until Graphiti expired it: open validity, withdrawn at expired_at.
    expect(byId.get(OLD)).toMatchObject({ subject: "Alice", statement: "Alice works at Acme.", status: "superseded", validFrom: new Date("2026-01-01T00:00:00Z"), validTo: null, recordedAt: new Date("2026-01-05T00:00:00Z"), retractedAt: new Date("2026-03-02T00:00:00Z"), sourceEpisodeIds: [EPISODE], beliefType: "relationship" });
    // The corrected record, on file from expired_at: validity closed at invalid_at.
    expect(byId.get(closed)).toMatchObject({ status: "superseded", validTo: new Date("2026-03-01T00:00:00Z"), recordedAt: new Date("2026-03-02T00:00:00Z"), retractedAt: null });
    // The edge that starts when the old one stopped, sharing its source node, supersedes both.
    expect(byId.get(NEW)).toMatchObject({ status: "active", statement: "Alice works at Globex.", supersedes: [OLD, closed], validTo: null });
  });

  it("read bare edge lists and JSON Lines; a missing node name is reported unless --subject", () => {
    const lines = graphitiDump().edges.map((e) => JSON.stringify(e)).join("\n");
    const { checked } = beliefs(lines);
    expect(checked.rejected).toEqual([
      { line: 1, message: 'edge.source_node_uuid: names a node that is not in the file (give "nodes", or --subject)' },
      { line: 2, message: 'edge.source_node_uuid: names a node that is not in the file (give "nodes", or --subject)' },
    ]);
    expect(beliefs(pretty(graphitiDump().edges), { subject: "Alice" }).checked.beliefs).toHaveLength(3);
  });
});

describe("chat transcripts", () => {
  it("map JSON Lines of role/content/time to episodes in order, with stable ids", () => {
    const text = [
      { role: "system", content: "You are helpful." },
      { role: "user", content: "I moved to Lisbon.", time: "2026-02-01T10:00:00Z" },
      { role: "assistant", content: "Noted.", time: "2026-02-01T10:00:04Z" },
    ].map((m) => JSON.stringify(m)).join("\n");
    const { mapped, checked } = beliefs(text);
    expect(checked.episodes.map((e) => [e.value.actor, e.value.kind, e.value.content, e.value.sequence, e.value.sessionId])).toEqual([
      ["user", "message", "I moved to Lisbon.", 1, "chat"],
      ["assistant", "message", "Noted.", 2, "chat"],
    ]);
    expect(checked.episodes[0]!.value.episodeId).toBe(stableUuid("transcript", "chat", "1"));
    expect([...mapped.leftOut]).toEqual([["system messages", 1]]);
  });

  it("map the OpenAI messages shape: content parts, tool calls, no times", () => {
    const text = pretty({
      model: "gpt-x",
      messages: [
        { role: "user", content: [{ type: "text", text: "What is the weather?" }, { type: "image_url", image_url: { url: "data:…" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Lisbon"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "Sunny" },
        { role: "assistant", content: "" },
      ],
    });
    const { checked } = beliefs(text);
    expect(checked.episodes.map((e) => [e.value.kind, e.value.content, e.value.occurredAt.toISOString()])).toEqual([
      ["message", "What is the weather?", "2026-01-01T00:00:00.000Z"],
      ["tool_call", 'weather({"city":"Lisbon"})', "2026-01-01T00:00:00.000Z"],
      ["tool_result", "Sunny", "2026-01-01T00:00:00.000Z"],
    ]);
    // Reported at the line of the message's opening brace, the one before its "role".
    const roleLine = text.split("\n").findLastIndex((l) => l.includes('"role": "assistant"')) + 1;
    expect(checked.rejected).toEqual([{ line: roleLine - 1, message: "messages[3].content: has no text" }]);
  });
});

describe("recall's own format and the checks on every record", () => {
  it("reports a duplicate id and a record the write RPCs would refuse, by line", () => {
    const belief = { belief_id: "b1000000-0000-4000-8000-000000000001", subject: "s", statement: "x", belief_type: "decision", status: "BELIEF_STATUS_ACTIVE", confidence: 0.8, authority: "AUTHORITY_USER", origin_scope: "p", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_LOCAL" };
    const text = [{ belief }, { belief }, { belief: { ...belief, belief_id: "b1000000-0000-4000-8000-000000000002", confidence: 2 } }, { note: 1 }].map((r) => JSON.stringify(r)).join("\n");
    expect(beliefs(text).checked.rejected).toEqual([
      { line: 2, message: "belief.belief_id: duplicates the record on line 1" },
      { line: 3, message: "belief.confidence: must be between 0 and 1" },
      { line: 4, message: 'line: must hold a "belief" or an "episode" object' },
    ]);
  });

  it("finds the line of each element of a pretty-printed document", () => {
    const text = '{\n  "results": [\n    {"a": "x, ]"},\n    {\n      "b": [1, 2]\n    }\n  ],\n  "other": [7]\n}';
    expect(elementLines(text)).toEqual(new Map([["results", [3, 4]], ["other", [8]]]));
    expect(elementLines('[\n1,\n"two"\n]')).toEqual(new Map([["", [2, 3]]]));
  });
});

describe("a file that is not JSON", () => {
  it("is one bad record at the line where the document breaks", () => {
    const { mapped } = mapFile('{\n  "results": [\n    {"id": "a", "memory": "x"},\n    {"id": "b" "memory": "y"}\n  ]\n}', OPTIONS);
    expect(mapped.records).toEqual([]);
    expect(mapped.rejected).toEqual([{ line: 4, message: expect.stringMatching(/^not JSON: /) }]);
  });
});

import { readFile } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { SearchRequestSchema } from "../../src/gen/memory/v1/memory_service_pb.js";
import { AGENT_TOOLS, MEMORY_RECALL_EPISODES_TOOL, MEMORY_SEARCH_TOOL } from "../../src/recall/agent-tools.js";
import { namesTheOwner, resolveSearchScope, SEARCH_TOOL_ID } from "../../src/recall/search.js";
import * as validate from "../../src/server/wire/validate.js";

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as Error).message;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("namesTheOwner (keyword queries turn on the ownership lookup)", () => {
  it.each(["user car", "User vehicle model", "what does the user drive", "owner laptop", "the owner's phone", "users' bikes", "andy car"])(
    "names the owner: %s",
    (text) => {
      expect(namesTheOwner(text, "andy")).toBe(true);
    },
  );

  it.each(["car model", "which car should I buy", "my car", "username policy", "ownership of the repo", "andyman"])(
    "does not: %s",
    (text) => {
      expect(namesTheOwner(text, "andy")).toBe(false);
    },
  );

  it("uses the principal id only when it is a plain name", () => {
    expect(namesTheOwner("p car", "p")).toBe(false);
    expect(namesTheOwner("p-8f21 car", "p-8f21")).toBe(false);
    expect(namesTheOwner("Maria's bike", "maria")).toBe(true);
  });
});

describe("resolveSearchScope: one rule for an omitted scope", () => {
  const never = () => Promise.reject(new Error("must not be looked up"));

  it("takes an explicit scope first (intentional cross-project lookup)", async () => {
    expect(await resolveSearchScope({ requested: "atlas", sessionHeader: "veetbot", snapshotScope: never })).toEqual({
      scope: "atlas",
      source: "request",
    });
  });

  it("then the session's x-session-scope metadata", async () => {
    expect(await resolveSearchScope({ requested: "", sessionHeader: "veetbot", snapshotScope: never })).toEqual({
      scope: "veetbot",
      source: "session_header",
    });
  });

  it("then the session's snapshot scope", async () => {
    const snapshot = async () => "veetbot";
    expect(await resolveSearchScope({ requested: "", sessionHeader: null, snapshotScope: snapshot })).toEqual({
      scope: "veetbot",
      source: "session_snapshot",
    });
    expect(await resolveSearchScope({ requested: "", sessionHeader: "", snapshotScope: snapshot })).toEqual({
      scope: "veetbot",
      source: "session_snapshot",
    });
  });

  it("else none", async () => {
    expect(await resolveSearchScope({ requested: "", sessionHeader: null, snapshotScope: async () => null })).toEqual({ scope: "", source: "none" });
  });
});

describe("validate.searchRequest (memory.search@2.1.0)", () => {
  it("refuses the old belief_types argument (field 12, an unknown field now) by name", () => {
    const req = create(SearchRequestSchema, { text: "coffee" });
    req.$unknown = [{ no: 12, wireType: 2, data: new TextEncoder().encode("\u0008preference") }];
    expect(invalid(() => validate.searchRequest(req))).toBe(
      "belief_types: is not an argument of memory.search@2.1.0; use type_hints (relevance anchors, not a filter)",
    );
  });

  it("ignores other unknown fields, as protobuf does", () => {
    const req = create(SearchRequestSchema, { text: "coffee" });
    req.$unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    expect(validate.searchRequest(req).text).toBe("coffee");
  });

  it("turns type_hints into structured anchors, never a type filter", () => {
    const q = validate.searchRequest(create(SearchRequestSchema, { text: "coffee", typeHints: ["preference", "user_model_attr"] }));
    expect(q.structuredBeliefTypes).toEqual(["preference", "user_model_attr"]);
    expect(q.beliefTypes).toEqual([]);
    expect(invalid(() => validate.searchRequest(create(SearchRequestSchema, { text: "x", typeHints: ["Preference"] })))).toBe(
      "type_hints[0]: must be snake_case (a-z, 0-9, _)",
    );
    expect(invalid(() => validate.searchRequest(create(SearchRequestSchema, { text: "x", typeHints: [""] })))).toBe("type_hints[0]: is required");
  });

  it("keeps as_of and known_at", () => {
    const q = validate.searchRequest(
      create(SearchRequestSchema, { text: "x", asOf: { seconds: 1_767_225_600n, nanos: 0 }, knownAt: { seconds: 1_767_312_000n, nanos: 0 } }),
    );
    expect(q.asOf).toEqual(new Date("2026-01-01T00:00:00Z"));
    expect(q.knownAt).toEqual(new Date("2026-01-02T00:00:00Z"));
  });
});

describe("the agent tool descriptions", () => {
  it("tell the model to search before asking, to name the fact, and that absence from the snapshot is not unknown", () => {
    const d = MEMORY_SEARCH_TOOL.description;
    expect(d).toMatch(/Search before you ask the user to repeat personal context/);
    expect(d).toMatch(/Name the fact you need/);
    expect(d).toMatch(/a fact missing from them is not unknown/);
    expect(MEMORY_SEARCH_TOOL.id).toBe(SEARCH_TOOL_ID);
    expect(MEMORY_RECALL_EPISODES_TOOL.description).toMatch(/Nothing here runs automatically/);
  });

  it("have schemas that refuse unknown arguments and have no belief_types", () => {
    for (const tool of AGENT_TOOLS) expect(tool.inputSchema.additionalProperties).toBe(false);
    const props = MEMORY_SEARCH_TOOL.inputSchema.properties as Record<string, unknown>;
    expect(Object.keys(props).sort()).toEqual(["as_of", "known_at", "scope", "subjects", "text", "type_hints"]);
  });

  it("are quoted verbatim in docs/agent-tools.md", async () => {
    const page = await readFile(new URL("../../docs/agent-tools.md", import.meta.url), "utf8");
    for (const tool of AGENT_TOOLS) expect(page).toContain(tool.description);
  });
});

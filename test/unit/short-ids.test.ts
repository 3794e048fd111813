import { describe, expect, it } from "vitest";
import { citedPrefixes, resolveShortId } from "../../src/domain/short-id.js";
import { correctionIds, renderCorrections } from "../../src/recall/moments/recall-delta.js";
import { blockShortIds, renderBlock, type RenderLine } from "../../src/recall/render/render.js";
import { shortIdsFor } from "../../src/recall/render/short-ids.js";
import { create } from "@bufbuild/protobuf";
import { RecordCitationsRequestSchema } from "../../src/gen/memory/v1/write_service_pb.js";
import { resolveCitedIds, shortIdWarnings } from "../../src/server/wire/short-ids.js";
import * as validate from "../../src/server/wire/validate.js";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const A2 = "aaaaaaaa-0000-4000-8000-000000000002";
const AB = "aaaaaaaa-b000-4000-8000-000000000003";
const C = "8f21a0c3-0000-4000-8000-000000000001";
const AS_OF = new Date("2026-07-24T09:00:00Z");

function line(beliefId: string, conflictsWith: string[] = []): RenderLine {
  return { beliefId, statement: `Statement ${beliefId.slice(-1)}.`, authority: "user", band: "high", learnedIn: null, conflictsWith, withheld: null };
}

describe("short ids", () => {
  it("are eight digits when no two ids of the block share them", () => {
    const ids = shortIdsFor([A, C]);
    expect(ids.lengthened).toBe(false);
    expect([ids(A), ids(C)]).toEqual(["m:aaaaaaaa", "m:8f21a0c3"]);
  });

  it("lengthen only the ids that collide, just past their common prefix", () => {
    const ids = shortIdsFor([A, A2, AB, C]);
    expect(ids.lengthened).toBe(true);
    // A and A2 share 31 digits; AB shares 8 with them.
    expect(ids(A)).toBe("m:aaaaaaaa000040008000000000000001");
    expect(ids(A2)).toBe("m:aaaaaaaa000040008000000000000002");
    expect(ids(AB)).toBe("m:aaaaaaaab");
    expect(ids(C)).toBe("m:8f21a0c3");
  });

  it("never make one short id a prefix of another, and do not depend on order", () => {
    const all = [A, A2, AB, C];
    const ids = shortIdsFor(all);
    const shorts = all.map((id) => ids(id));
    for (const a of shorts) for (const b of shorts) if (a !== b) expect(b.startsWith(a)).toBe(false);
    const reversed = shortIdsFor([...all].reverse());
    expect(all.map((id) => reversed(id))).toEqual(shorts);
  });

  it("keep a collision-free block byte-identical to the eight-digit rendering", () => {
    expect(renderBlock(AS_OF, "retrieval@6", [line(C), line(A)])).toBe(
      '<memory as_of="2026-07-24T09:00:00Z" policy="retrieval@6">\n' +
        "  [m:8f21a0c3] Statement 1.  (user-stated, high)\n" +
        "  [m:aaaaaaaa] Statement 1.  (user-stated, high)\n" +
        "</memory>\n",
    );
  });

  it("tell two beliefs of one block apart, in their lines and their conflict markers", () => {
    const block = renderBlock(AS_OF, "retrieval@6", [line(A, [AB]), line(AB, [A])]);
    expect(block).toContain("  [m:aaaaaaaa0] Statement 1.  (user-stated, high) conflicts=[m:aaaaaaaab]\n");
    expect(block).toContain("  [m:aaaaaaaab] Statement 3.  (user-stated, high) conflicts=[m:aaaaaaaa0]\n");
  });

  it("tell a corrected belief from its successor when they share eight digits", () => {
    const corrections = [{ beliefId: A, supersededBy: AB, noLongerHoldsAsOf: AS_OF }];
    const ids = blockShortIds([line(AB)], correctionIds(corrections));
    expect(renderCorrections(corrections, ids)).toBe(
      "correction: [m:aaaaaaaa0] no longer holds as of 2026-07-24T09:00:00Z; superseded by [m:aaaaaaaab].\n",
    );
  });
});

describe("the citation join", () => {
  it("parses every [m:…] a text cites, of any length, once each", () => {
    expect(citedPrefixes("As [m:8F21A0C3] says, and [m:aaaaaaaab] too; see [m:8f21a0c3] and [m:12ab].")).toEqual(["8f21a0c3", "aaaaaaaab"]);
  });

  it("resolves a short id to the one returned belief it names", () => {
    expect(resolveShortId("m:aaaaaaaab", [A, AB, C])).toEqual([AB]);
    expect(resolveShortId("[m:8f21a0c3]", [A, AB, C])).toEqual([C]);
    expect(resolveShortId("aaaaaaaa", [A, AB])).toEqual([A, AB]);
  });
});

describe("RecordCitations with short ids", () => {
  const TRACE = "7ace0000-0000-4000-8000-000000000001";

  it("accepts a full id or the block's short id, bracketed or not", () => {
    const req = create(RecordCitationsRequestSchema, { traceId: TRACE, beliefIds: [C.toUpperCase(), "[m:AAAAAAAAB]", "m:8f21a0c3"] });
    expect(validate.citations(req).beliefIds).toEqual([C, "m:aaaaaaaab", "m:8f21a0c3"]);
    const bad = create(RecordCitationsRequestSchema, { traceId: TRACE, beliefIds: ["m:12ab", ""] });
    expect(() => validate.citations(bad)).toThrow(
      "belief_ids[0]: must be a UUID or a short id of the block ([m:8f21a0c3]); belief_ids[1]: is required",
    );
  });

  it("resolves short ids to the trace's returned ids, and names each that matches none or several", () => {
    expect(resolveCitedIds(["m:aaaaaaaab", C, "m:8f21a0c3"], [A, AB, C])).toEqual([AB, C, C]);
    expect(() => resolveCitedIds(["m:aaaaaaaa", "m:bbbbbbbb"], [A, AB])).toThrow(
      "belief_ids[0]: names 2 beliefs of this trace: cite the id as its block shows it; belief_ids[1]: was not returned by this trace",
    );
  });
});

describe("the write path's short-id warnings", () => {
  it("name a request's ids that share a short id with a stored belief or an earlier one of the request", () => {
    const warnings = shortIdWarnings([C, A, AB], new Map([[C, []], [A, [A2]]]));
    expect(warnings).toEqual([
      `beliefs[1].belief_id: shares its first eight hex digits (aaaaaaaa) with ${A2}; a block showing both cites them by longer ids (random UUID v4 ids avoid this)`,
      `beliefs[2].belief_id: shares its first eight hex digits (aaaaaaaa) with ${A}; a block showing both cites them by longer ids (random UUID v4 ids avoid this)`,
    ]);
  });

  it("are empty for random ids", () => {
    expect(shortIdWarnings([C, A], new Map())).toEqual([]);
  });
});

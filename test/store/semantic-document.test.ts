import { int8Rounded } from "../../src/domain/int8-vector.js";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { SENSITIVITY, type Episode, type Principal } from "../../src/domain/model.js";
import { EmbeddingBackfill } from "../../src/embed/embedding-backfill.js";
import { documentParts, documentVector } from "../../src/embed/document-vector.js";
import { hashedEmbedder } from "../../src/embed/hashed-embedder.js";
import { documentWeights, RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { sourceContextTexts } from "../../src/store/beliefs/source-context.js";
import { enableSemantic, SemanticStore } from "../../src/store/candidates/semantic-store.js";
import { belief, episode, newPrincipal } from "../support/fixtures.js";
import { freshPgliteWithVector, STORE_KINDS } from "../support/stores.js";
import { filterFor, useStore } from "./store-helpers.js";

/**
 * The semantic arm embeds what the lexical arm indexes (issue 45): a
 * belief's statement and its source context, and embeds it again when that
 * context changes. The context's text is plain SQL, read alike on both
 * stores; the vectors need pgvector, which only PGlite has here.
 */

const W = documentWeights(RETRIEVAL_POLICY);
const at = (minute: number) => new Date(Date.UTC(2026, 0, 5, 10, minute));
/** One session's turns, in order. */
const turns = (sessionId: string, contents: string[], o: Partial<Episode> = {}): Episode[] =>
  contents.map((content, i) => episode({ sessionId, content, occurredAt: at(i), sequence: i, ...o }));

describe.each(STORE_KINDS)("a belief's source context as text ($kind)", ({ open }) => {
  const store = useStore(open);

  it("is its source episodes and their neighbours within two turns, in session order, none more sensitive than the belief", async () => {
    const p = newPrincipal("ctx");
    const session = turns("s-ctx", ["t0 far", "t1 before", "t2 near", "t3 I drove Mia to her cello lesson", "t4 after", "t5 also", "t6 far"]);
    session[4] = { ...session[4]!, content: "t4 secret", sensitivity: SENSITIVITY.restricted };
    await store().appendEpisodes(p, session);
    const b = belief({ statement: "Andy's daughter Mia plays the cello", sourceEpisodeIds: [session[3]!.episodeId] });
    const lone = belief({ statement: "Andy prefers concise writing" });
    await store().putBeliefs(p, [b, lone]);
    const texts = await sourceContextTexts(store().db, p, [b.beliefId, lone.beliefId]);
    expect(texts.get(b.beliefId)).toEqual({ source: "t3 I drove Mia to her cello lesson", neighbours: "t1 before t2 near t5 also" });
    expect(texts.has(lone.beliefId)).toBe(false);
    // Another principal's beliefs are not read, whatever ids are asked for.
    expect((await sourceContextTexts(store().db, newPrincipal("other"), [b.beliefId])).size).toBe(0);
  });
});

describe("the embedded document (pglite with pgvector)", () => {
  const store = useStore(freshPgliteWithVector);
  const embedder = hashedEmbedder(256);
  let semantic: SemanticStore;
  const backfill = () =>
    new EmbeddingBackfill(
      semantic,
      embedder,
      { batch: 50, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted },
      pino({ level: "silent" }),
    );
  const embedAll = async () => {
    const b = backfill();
    while ((await b.embedBatch()) > 0);
  };
  const nearest = async (p: Principal, text: string) =>
    (await semantic.semanticCandidates(filterFor(p), embedder.id, (await embedder.embed([text]))[0]!, 10, 0.05)).map((c) => [c.belief.beliefId, c.armScore] as const);

  beforeAll(async () => {
    await enableSemantic(store().db);
    semantic = new SemanticStore(store().db, W);
  });

  it("is the statement and its source context, weighted as the lexical fields: the source's words find the belief", async () => {
    const p = newPrincipal("doc");
    const session = turns("s-doc", ["how was the weekend", "I drove Mia to her cello lesson at the conservatory", "nice"]);
    await store().appendEpisodes(p, session);
    const b = belief({ statement: "Andy's daughter plays an instrument", sourceEpisodeIds: [session[1]!.episodeId] });
    await store().putBeliefs(p, [b]);
    const [missing] = await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 10, { principal: p });
    expect(missing!.context).toEqual({ source: session[1]!.content, neighbours: "how was the weekend nice" });
    await embedAll();
    // "conservatory" is only in the source episode.
    const [[id, cosine]] = (await nearest(p, "conservatory")) as [[string, number]];
    expect(id).toBe(b.beliefId);
    const parts = documentParts(missing!, W);
    // Stored as its int8 values × scale (domain/int8-vector.ts), which the cosine sees.
    const expected = int8Rounded(documentVector(await embedder.embed(parts.map((x) => x.text)), parts.map((x) => x.weight)));
    const query = (await embedder.embed(["conservatory"]))[0]!;
    const norm = (v: readonly number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    expect(cosine).toBeCloseTo(expected.reduce((s, x, i) => s + x * query[i]!, 0) / norm(expected) / norm(query), 5);
  });

  it("is embedded again when its context changes: an episode appended to its session after the belief", async () => {
    const p = newPrincipal("later");
    const first = turns("s-later", ["we talked about music"]);
    await store().appendEpisodes(p, first);
    const b = belief({ statement: "Andy's daughter plays an instrument", sourceEpisodeIds: [first[0]!.episodeId] });
    await store().putBeliefs(p, [b]);
    await embedAll();
    const head = await semantic.headPosition(p);
    expect(await nearest(p, "cello")).toEqual([]);
    expect(await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 10, { principal: p })).toEqual([]);

    // The next turn of the session: it moves no belief, but it is the belief's neighbour now.
    await store().appendEpisodes(p, turns("s-later", ["she started the cello in May"], { occurredAt: at(30), sequence: 1 }));
    // The stale vector is not served, and the lookup after the covered position finds the belief.
    expect(await nearest(p, "cello")).toEqual([]);
    const missing = await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 10, { principal: p, afterPosition: head });
    expect(missing.map((m) => m.beliefId)).toEqual([b.beliefId]);
    expect(missing[0]!.context.neighbours).toBe("she started the cello in May");
    await embedAll();
    expect((await nearest(p, "cello")).map(([id]) => id)).toEqual([b.beliefId]);
  });

  it("vectors of a statement-only document (another composition) count as missing", async () => {
    const p = newPrincipal("composition");
    await store().putBeliefs(p, [belief({ statement: "Andy prefers tabs" })]);
    await embedAll();
    const other = new SemanticStore(store().db, { ...W, neighbours: 0 });
    expect(await other.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 10, { principal: p })).toHaveLength(1);
    expect(await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 10, { principal: p })).toHaveLength(0);
  });
});

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { EmbedderError } from "../../src/ports/embedder.js";
import { LocalEmbedder, subBatches } from "../../src/embed/local-embedder.js";
import type { LocalModelFolder } from "../../src/embed/local-model-folder.js";

/** The local embedder's queue and worker handling, against a stand-in worker (no model, fast, deterministic). */

const FAKE_WORKER = fileURLToPath(new URL("../fixtures/embed/fake-local-worker.mjs", import.meta.url));
const folder = (name = "fake"): LocalModelFolder => ({
  dir: `/models/${name}`,
  name,
  modelFile: "",
  tokenizerFile: "",
  tokenizerConfigFile: "",
  dimensions: 2,
  maxTokens: 8,
  pooling: "mean",
  prefixes: { query: "", document: "" },
});

let embedder: LocalEmbedder | undefined;
const make = (subBatch: number, name?: string) => (embedder = new LocalEmbedder(folder(name), { threads: 1, subBatch, workerPath: FAKE_WORKER }));
afterEach(async () => {
  await embedder?.close();
  embedder = undefined;
});

describe("subBatches", () => {
  it("cuts a request into sub-batches of similar lengths, every index once", () => {
    expect(subBatches(["ccc", "a", "bb", "dddd", "e"], 2)).toEqual([[1, 4], [2, 0], [3]]);
    expect(subBatches([], 4)).toEqual([]);
  });
});

describe("LocalEmbedder", () => {
  it("names the model folder and dimension in its id", () => {
    expect(make(4).id).toBe("local:fake:2");
  });

  it("puts the folder's query or document prefix before each text, and names the variant in its id", async () => {
    embedder = new LocalEmbedder(
      { ...folder("e5"), pooling: "cls", prefixes: { query: "query: ", document: "passage: " } },
      { threads: 1, subBatch: 4, workerPath: FAKE_WORKER },
    );
    expect(embedder.id).toBe("local:e5:2:cls");
    // The stand-in answers each text's length: the prefix was sent with it.
    expect((await embedder.embed(["abc"], undefined, "query")).map((v) => v[1])).toEqual(["query: abc".length]);
    expect((await embedder.embed(["abc", "de"])).map((v) => v[1])).toEqual(["passage: abc".length, "passage: de".length]);
  });

  it("answers every text in input order across sub-batches", async () => {
    const texts = ["four", "a", "seven77", "xx", "five5"];
    const vectors = await make(2).embed(texts);
    expect(vectors.map((v) => v[1])).toEqual(texts.map((t) => t.length));
  });

  it("runs a one-text request (a query) before the sub-batches already waiting", async () => {
    const e = make(1);
    await e.start();
    const batch = e.embed(["slow1", "slow2", "slow3", "slow4", "slow5"]);
    const query = await e.embed(["query"]);
    const batchOrder = (await batch).map((v) => v[0]!);
    // The query ran right after the sub-batch that was running when it arrived, not after all five.
    expect(query[0]![0]).toBeLessThan(Math.max(...batchOrder));
  });

  it("an aborted request is answered at once with the signal's reason; its other sub-batches are dropped", async () => {
    const e = make(1);
    await e.start();
    const controller = new AbortController();
    const pending = e.embed(["slow1", "slow2", "slow3", "slow4"], controller.signal);
    const reason = new Error("deadline");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    // The queue moves on: a later request is answered after at most the sub-batch that was running.
    const [v] = await e.embed(["next"]);
    expect(v![0]).toBeLessThanOrEqual(2);
  });

  it("an error from the model fails the request with an EmbedderError and leaves the worker serving", async () => {
    const e = make(4);
    await expect(e.embed(["bad", "x"])).rejects.toThrow(EmbedderError);
    expect(await e.embed(["ok"])).toEqual([[expect.any(Number), 2]]);
  });

  it("a worker that dies fails what it held with an EmbedderError, and a new one serves the next request", async () => {
    const e = make(4);
    await expect(e.embed(["crash"])).rejects.toThrow(/worker stopped/);
    expect(await e.embed(["abc"])).toEqual([[1, 3]]);
  });

  it("a model that cannot be loaded fails each request with an EmbedderError naming the folder", async () => {
    await expect(make(4, "unloadable").embed(["x"])).rejects.toThrow(/local model \/models\/unloadable could not be loaded: no model.onnx here/);
  });

  it("after close, waiting and new requests fail", async () => {
    const e = make(1);
    await e.start();
    const pending = expect(e.embed(["slow1", "slow2", "slow3"])).rejects.toThrow(/closed/);
    await e.close();
    await pending;
    await expect(e.embed(["x"])).rejects.toThrow(/closed/);
  });
});

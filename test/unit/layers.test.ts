import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALLOWED, LAYERS, importGraph, importsOf, violations } from "../support/import-graph.js";

/** The import-direction rule of ARCHITECTURE.md: every import of src/ points down the layers. */

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

describe("the layers of src/", () => {
  it("place every folder of src/ in one layer, and no file at its root", () => {
    const entries = readdirSync(SRC, { withFileTypes: true });
    expect(entries.filter((e) => !e.isDirectory()).map((e) => e.name)).toEqual([]);
    const placed = LAYERS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    expect(entries.map((e) => e.name).sort()).toEqual([...placed].sort());
  });

  it("are imported downwards only", () => {
    const edges = importGraph(SRC);
    // The graph is real: hundreds of imports, many across folders.
    expect(edges.length).toBeGreaterThan(500);
    expect(violations(edges)).toEqual([]);
  });

  it("keep no exception that is no longer used", () => {
    const edges = importGraph(SRC);
    for (const x of ALLOWED) expect(edges.some((e) => e.from === x.from && e.to === x.to), `${x.from} -> ${x.to}`).toBe(true);
  });
});

describe("the import-direction check", () => {
  it("fails on an upward import, a type-only one and a dynamic one", () => {
    const edges = importsOf(
      "store/memory-store.ts",
      [
        'import { toConnectError } from "../server/errors.js";',
        'import type { RecallOutcome } from "../recall/pipeline.js";',
        'const cli = await import("../cli/main.js");',
        'export { x } from "../trace/trace-writer.js";',
      ].join("\n"),
    );
    expect(violations(edges)).toEqual([
      "store/memory-store.ts imports server/errors.ts: store/ may not import the layer above, server/",
      "store/memory-store.ts imports recall/pipeline.ts: store/ may not import the layer above, recall/",
      "store/memory-store.ts imports cli/main.ts: store/ may not import the layer above, cli/",
      "store/memory-store.ts imports trace/trace-writer.ts: store/ may not import the layer above, trace/",
    ]);
  });

  it("fails on a peer import and on a folder no layer places", () => {
    expect(violations(importsOf("embed/x.ts", 'import { a } from "../principal-index/y.js";'))).toEqual([
      "embed/x.ts imports principal-index/y.ts: embed/ may not import its peer principal-index/",
    ]);
    expect(violations(importsOf("wire/x.ts", 'import { a } from "../domain/model.js";'))).toEqual([
      "wire/x.ts: folder wire/ is in no layer (add it to LAYERS and ARCHITECTURE.md)",
    ]);
  });

  it("lets a downward import, an import within a folder and a package import through", () => {
    const edges = importsOf(
      "server/wire/validate.ts",
      [
        'import { InvalidArgumentError } from "../../domain/errors.js";',
        'import { AUTHORITY } from "./convert.js";',
        'import { Code } from "@connectrpc/connect";',
        '// import { nope } from "../../cli/main.js";',
        'const s = "import { nope } from \\"../../cli/main.js\\"";',
      ].join("\n"),
    );
    expect(edges.map((e) => e.to)).toEqual(["domain/errors.ts", "server/wire/convert.ts"]);
    expect(violations(edges)).toEqual([]);
  });

  it("lets an import the exceptions list names through, and only that one", () => {
    const edges = importsOf("store/a.ts", 'import "../server/b.js";\nimport "../server/c.js";');
    const allowed = [{ from: "store/a.ts", to: "server/b.ts", reason: "test" }];
    expect(violations(edges, LAYERS, allowed)).toEqual([
      "store/a.ts imports server/c.ts: store/ may not import the layer above, server/",
    ]);
  });
});

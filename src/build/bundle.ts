import { chmod, copyFile, mkdir, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

/**
 * Build step (`npm run build`, after tsc): the files a process or thread
 * starts from, `dist/cli/main.js` (`recall`), `dist/testing/sidecar-child.js`
 * (startLocalSidecar's child) and `dist/store/pglite-worker.js` (the
 * ephemeral store's thread, from store/pglite/pglite-worker.ts), are
 * replaced by bundles of themselves and what they import, their shared
 * code in `dist/chunks/`. Node's ESM loader costs about 1 ms of CPU per
 * file, and a sidecar imported some 570 files: bundled, a start spends
 * about 0.5 s less CPU before it can open its store (docs/adr/0007).
 * The library entry points (`@recall-memory/sidecar`, `@recall-memory/sidecar/testing`) stay as tsc wrote them.
 *
 * Every file lands two folders below the package root, as the modules it
 * holds were, so their `new URL("../../sql/", import.meta.url)` and the
 * like still point where they did.
 */
const DIST = fileURLToPath(new URL("../", import.meta.url));

/**
 * Left to Node at run time: PGlite and pgvector find their WebAssembly and
 * data files next to their own modules, and OpenTelemetry's SDK is imported
 * only when tracing is on. Its API is bundled (prom-client's default metrics
 * load it at every start): copies of the API share one global registration.
 * protobuf-es validates every request, and stays as its authors wrote it:
 * rolldown's dead-code elimination (whatever the treeshake and minify
 * options) drops calls it believes pure that are there for their exceptions,
 * and it dropped protobuf-es's UTF-8 check (`try { encodeURIComponent(text) }
 * catch`), so Connect JSON with a lone surrogate was accepted
 * (test/integration/hostile-input.test.ts). A library bundled here must not
 * rely on a discarded call throwing (zod's URL check uses the URL it parses).
 * ONNX Runtime (the local embedder's thread) loads its native binding from
 * beside its own module.
 */
const EXTERNAL = [/^onnxruntime-node$/, /^@electric-sql\//, /^@opentelemetry\/(?!api$)/, /^@bufbuild\/protobuf/];

await rm(`${DIST}chunks`, { recursive: true, force: true });
await build({
  input: {
    "cli/main": `${DIST}cli/main.js`,
    "testing/sidecar-child": `${DIST}testing/sidecar-child.js`,
    // Bundled two folders down like the rest, where store/ephemeral-start.ts looks for it.
    "store/pglite-worker": `${DIST}store/pglite/pglite-worker.js`,
  },
  platform: "node",
  external: EXTERNAL,
  logLevel: "warn",
  output: {
    dir: DIST,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    sourcemap: true,
  },
});
// The bin is a program: `recall` on PATH and npx's cached link to it run it
// directly, and npx marks it executable only when it first makes that link.
await chmod(`${DIST}cli/main.js`, 0o755);
await bundlePage();
process.stdout.write(`bundled ${DIST}cli/main.js, ${DIST}testing/sidecar-child.js and ${DIST}store/pglite-worker.js\n`);

/**
 * The memory inspector page (src/ui, served at /ui/ with RECALL_UI=on): one
 * browser bundle, dist/ui/app.js, built from the TypeScript sources (with
 * the generated protobuf code and Connect), next to its HTML and CSS. Preact's
 * JSX is compiled here; no script is inlined (the page's CSP forbids it).
 */
async function bundlePage(): Promise<void> {
  const source = fileURLToPath(new URL("../../src/ui/", import.meta.url));
  const out = `${DIST}ui/`;
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await build({
    input: `${source}main.tsx`,
    platform: "browser",
    tsconfig: fileURLToPath(new URL("../../tsconfig.ui.json", import.meta.url)),
    resolve: { extensionAlias: { ".js": [".ts", ".tsx", ".js"] } },
    logLevel: "warn",
    output: { file: `${out}app.js`, format: "esm", minify: true },
  });
  await copyFile(`${source}index.html`, `${out}index.html`);
  await copyFile(`${source}app.css`, `${out}app.css`);
}

import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PGLITE_TEMPLATE_PATH, readEphemeralFiles, readOutsideMalloc } from "../../src/store/ephemeral-start.js";

/**
 * What the PGlite worker reads at start (docs/adr/0025): the large files are
 * read into memory V8 maps itself, not glibc's malloc, so that freeing them
 * does not leave the allocator keeping ~15 MiB of the worker's start. Node
 * counts malloc'd ArrayBuffers in process.memoryUsage().arrayBuffers, and
 * not WebAssembly memory, which tells the two apart.
 */
describe("the ephemeral store's files", () => {
  it("reads a file's bytes whole, outside malloc", async () => {
    const expected = await readFile(PGLITE_TEMPLATE_PATH);
    const before = process.memoryUsage().arrayBuffers;
    const bytes = await readOutsideMalloc(PGLITE_TEMPLATE_PATH);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 ** 20);
    expect(bytes.length).toBe(expected.length);
    expect(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).equals(expected)).toBe(true);
  });

  it("hands PGlite a template whose bytes are read outside malloc when PGlite reads them", async () => {
    const template = await readEphemeralFiles().template;
    expect(template).not.toBeNull();
    const before = process.memoryUsage().arrayBuffers;
    const tar = new Uint8Array(await template!.arrayBuffer());
    // 10 MiB of template, none of it malloc'd (was: all of it, freed after the start and kept by glibc).
    expect(tar.length).toBeGreaterThan(5 * 2 ** 20);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 ** 20);
    // The file's bytes, then zeros to the end of the last page (a tar ends in zeros).
    const file = await readFile(PGLITE_TEMPLATE_PATH);
    expect(Buffer.from(tar.subarray(0, file.length)).equals(file)).toBe(true);
    expect(tar.subarray(file.length).every((b) => b === 0)).toBe(true);
  });
});

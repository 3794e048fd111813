import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PGLITE_BUNDLE_LAYOUT, pgliteFile, readEphemeralFiles } from "../../src/store/ephemeral-start.js";
import { pgliteFs, readBundleWithHoles, unreadOnceMade, type BundleLayout } from "../../src/store/pglite/pglite-bundle.js";
import { openEphemeralPglite } from "../../src/store/pglite/pglite-template.js";

/**
 * PGlite's file-system bundle read with holes (docs/adr/0026): the files a
 * database loaded from the template never reads are left unread, never
 * resident, and removed from PGlite's file system once it answers; what it
 * does read is there byte for byte. Runs against the build's layout (`npm run build`).
 */
describe("PGlite's bundle with holes", () => {
  it("leaves out initdb's input, ICU's data, encoding conversions and replication, and nothing a store reads", async () => {
    const layout = JSON.parse(await readFile(PGLITE_BUNDLE_LAYOUT, "utf8")) as BundleLayout;
    expect(layout.paths).toContain("/pglite/share/postgresql/postgres.bki");
    expect(layout.paths).toContain("/pglite/lib/postgresql/utf8_and_sjis.so");
    expect(layout.paths).toContain("/pglite/lib/postgresql/libpqwalreceiver.so");
    expect(layout.paths.some((p) => p.startsWith("/pglite/icu/"))).toBe(true);
    expect(layout.paths.every(unreadOnceMade)).toBe(true);
    for (const kept of ["dict_snowball.so", "plpgsql.so"]) expect(layout.paths).not.toContain(`/pglite/lib/postgresql/${kept}`);
    expect(layout.paths.some((p) => /timezone|tsearch_data|extension/.test(p))).toBe(false);
    // About a third of the bundle's 6 MB.
    const holes = layout.holes.reduce((sum, [start, end]) => sum + end - start, 0);
    expect(holes).toBeGreaterThan(3 * 2 ** 20);
  });

  it("reads every byte but the holes', outside malloc, into a buffer of the bundle's length", async () => {
    const layout = JSON.parse(await readFile(PGLITE_BUNDLE_LAYOUT, "utf8")) as BundleLayout;
    const file = await readFile(pgliteFile("pglite.data"));
    const before = process.memoryUsage().arrayBuffers;
    const buffer = await readBundleWithHoles(pgliteFile("pglite.data"), layout);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 ** 20);
    expect(buffer!.byteLength).toBe(file.length);
    const bytes = Buffer.from(buffer!);
    let at = 0;
    for (const [start, end] of [...layout.holes, [file.length, file.length] as [number, number]]) {
      expect(bytes.subarray(at, start).equals(file.subarray(at, start))).toBe(true);
      expect(bytes.subarray(start, end).every((b) => b === 0)).toBe(true);
      at = end;
    }
    // A layout made for another bundle is not used.
    expect(await readBundleWithHoles(pgliteFile("pglite.data"), { ...layout, bundleBytes: layout.bundleBytes + 1 })).toBeNull();
  });

  it("gives the ephemeral store a file system without the unread files, and the store still stems, zones and fails cleanly", async () => {
    const files = readEphemeralFiles();
    const layout = await files.unread;
    expect(layout?.paths.length).toBeGreaterThan(10);
    const { db, fromTemplate } = await openEphemeralPglite({ files });
    try {
      expect(fromTemplate).toBe(true);
      const fs = pgliteFs(db);
      for (const path of layout!.paths) expect(fs.analyzePath(path).exists).toBe(false);
      // What it reads is whole: the English stemmer (dict_snowball.so), time zones.
      const { rows } = await db.query<{ stems: string; paris: string }>(
        "SELECT to_tsvector('english', 'The cats were running')::text AS stems, (timestamptz '2026-07-01 12:00Z' AT TIME ZONE 'Europe/Paris')::text AS paris",
      );
      expect(rows[0]).toEqual({ stems: "'cat':2 'run':4", paris: "2026-07-01 14:00:00" });
      // A conversion the sidecar never asks for is an error, not zeros.
      await expect(db.query("SELECT convert_to('x', 'SJIS')")).rejects.toThrow(/utf8_and_sjis/);
      expect((await db.query<{ n: number }>("SELECT 1 AS n")).rows[0]!.n).toBe(1);
    } finally {
      await db.close();
    }
  });
});

import { readFile } from "node:fs/promises";
import { describe, expect, inject, it } from "vitest";
import { pgliteExtensions } from "../../src/store/pglite/pglite-client.js";
import { pgliteFs } from "../../src/store/pglite/pglite-bundle.js";
import { loadPgliteTemplate } from "../../src/store/pglite/pglite-template.js";
import { withoutTarEntries } from "../../src/store/pglite/tar-entries.js";

/** The slimmed template (docs/adr/0007): what it leaves out must not be missed by a store loaded from it. */
describe("the PGlite template", () => {
  it("holds one database and one WAL segment, loads with small shared memory, and keeps writing past its segment", async () => {
    const tar = await readFile(inject("pgliteTemplate"));
    const wal = tarNames(tar).filter((n) => /pg_wal\/[0-9A-F]{24}$/.test(n));
    expect(wal).toHaveLength(1);
    const db = await loadPgliteTemplate(tar, pgliteExtensions);
    try {
      const { rows } = await db.query<Record<string, string>>(
        `SELECT current_setting('shared_buffers') AS buffers, current_setting('max_connections') AS connections, current_setting('huge_pages') AS huge,
                current_setting('wal_segment_size') AS segment,
                (SELECT string_agg(datname, ',') FROM pg_database) AS databases,
                (SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension) AS extensions`,
      );
      expect(rows[0]).toEqual({ buffers: "2MB", connections: "4", huge: "off", segment: "1MB", databases: "postgres", extensions: "btree_gin,pg_trgm,plpgsql" });
      // About 3 MB of WAL: segments the dump left out are created as they are needed.
      await db.exec("CREATE TABLE wal_filler AS SELECT repeat(md5(g::text), 40) AS t FROM generate_series(1, 2000) g; CHECKPOINT");
      expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM wal_filler")).rows[0]!.n).toBe(2000);
    } finally {
      await db.close();
    }
  });

  it("lays the database's files out as views of the template's bytes, written in place, the caller's bytes untouched", async () => {
    const tar = await readFile(inject("pgliteTemplate"));
    const original = Buffer.from(tar);
    const db = await loadPgliteTemplate(tar, pgliteExtensions);
    try {
      // A view of the whole tarball (PGlite's own loader gave each file a buffer of its own).
      const fs = pgliteFs(db) as unknown as { lookupPath(path: string): { node: { contents: Uint8Array } } };
      const version = fs.lookupPath("/pglite/data/PG_VERSION").node.contents;
      expect(version.buffer.byteLength).toBeGreaterThanOrEqual(tar.length);
      await db.exec("CREATE TABLE written AS SELECT g AS n FROM generate_series(1, 5000) g; CHECKPOINT");
      expect((await db.query<{ n: number }>("SELECT sum(n)::int AS n FROM written")).rows[0]!.n).toBe(12_502_500);
    } finally {
      await db.close();
    }
    expect(tar.equals(original)).toBe(true);
  });

  it("drops tar entries by name and copies the others byte for byte", async () => {
    const tar = new Uint8Array(await readFile(inject("pgliteTemplate")));
    const names = tarNames(tar);
    const slim = withoutTarEntries(tar, (n) => n.startsWith("/base/"));
    expect(tarNames(slim)).toEqual(names.filter((n) => !n.startsWith("/base/")));
    // Keeping everything gives the same bytes (Buffer.equals: vitest's deep equality over 10 MB takes a minute).
    const all = withoutTarEntries(tar, () => false);
    expect(Buffer.from(all).equals(Buffer.from(tar.subarray(0, all.length)))).toBe(true);
    expect(tar.subarray(all.length).every((b) => b === 0)).toBe(true);
  });
});

/** Entry names, read the simple way: every header block that follows the previous entry's data. */
function tarNames(tar: Uint8Array): string[] {
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const header = Buffer.from(tar.subarray(at, at + 512));
    names.push(header.toString("latin1", 0, 100).replace(/\0.*$/s, ""));
    const size = header[156] === 0x35 ? 0 : parseInt(header.toString("latin1", 124, 136).replace(/\0.*$/s, "").trim() || "0", 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

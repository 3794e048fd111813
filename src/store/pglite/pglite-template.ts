import { PGlite, type Extensions } from "@electric-sql/pglite";
import { readEphemeralFiles, type EphemeralFiles, type PgliteEngine } from "../ephemeral-start.js";
import { loadMigrations, migrate, type Migration } from "../migrate.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPgliteClient, openPglite, pgliteExtensions, pgliteVectorExtensions, SHARED_MEMORY_PARAMS, SIDECAR_START_PARAMS } from "./pglite-client.js";
import { pgliteFs, removeUnreadFiles } from "./pglite-bundle.js";
import { withoutTarEntries } from "./tar-entries.js";
import { TemplateFs } from "./template-fs.js";

/**
 * The ephemeral store: an in-memory PGlite loaded from a migrated template
 * that `npm run build` writes (dist/pglite-template.tar). Creating a PGlite
 * database runs initdb in WebAssembly, which is most of a fresh directory's
 * start-up; loading a dump skips it. See docs/adr/0007.
 */


/**
 * PGlite's start parameters for the ephemeral store (a database loaded from
 * the template): 2 MB of shared buffers. Its files are in memory already
 * (PGlite's in-memory file system), so a page that is not in a buffer is a
 * copy away, and every buffer is zeroed at start, resident for good: 16 MB of
 * them (a data directory's, pglite-client.ts) held 13 MiB more of an idle
 * sidecar (docs/adr/0025). 128 MB, PostgreSQL's default, cost 0.3–1.3 s of
 * CPU at every start as well (docs/adr/0013).
 */
export const TEMPLATE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, "-c", "shared_buffers=2MB", ...SHARED_MEMORY_PARAMS];

/**
 * A fresh in-memory database with every migration applied, dumped as an
 * uncompressed tarball of what a start needs: 15 MB instead of 40, since a
 * start writes every file of it into PGlite's in-memory file system.
 */
export async function buildPgliteTemplate(migrations?: Migration[]): Promise<Blob> {
  const db = await PGlite.create({
    extensions: pgliteExtensions,
    // 1 MB WAL segments instead of 16: the dump holds the current segment whole.
    initDbStartParams: ["--wal-segsize=1"],
    startParams: [...SIDECAR_START_PARAMS, "-c", "min_wal_size=2MB"],
  });
  try {
    await migrate(createPgliteClient(db), migrations ?? (await loadMigrations()));
    // template0 and template1 (14 MB) serve only CREATE DATABASE, which nothing runs against this store.
    await db.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
    await db.exec("DROP DATABASE template0");
    await db.exec("DROP DATABASE template1");
    // A checkpoint, so a database loaded from the dump has no WAL to replay at start.
    await db.exec("CHECKPOINT");
    const { rows } = await db.query<{ redo: string; checkpoint: string }>(
      "SELECT pg_walfile_name(redo_lsn) AS redo, pg_walfile_name(checkpoint_lsn) AS checkpoint FROM pg_control_checkpoint()",
    );
    const needed = new Set([rows[0]!.redo, rows[0]!.checkpoint]);
    // Uncompressed: gunzip at every start would cost more than the larger file's read.
    const dump = new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer());
    // The other WAL segments are recycled ones kept for future writes, which PostgreSQL creates anew when missing.
    const isSpareSegment = (name: string) => /^\/?pg_wal\/[0-9A-F]{24}$/.test(name) && !needed.has(name.slice(name.lastIndexOf("/") + 1));
    return new Blob([withoutTarEntries(dump, isSpareSegment)], { type: "application/x-tar" });
  } finally {
    await db.close();
  }
}

/**
 * An in-memory PGlite from the shipped template, or, where the template is
 * missing (a checkout that was never built), a fresh one: correct, only slow.
 * `migrations` lists what the template holds (null without a template): openStore
 * skips the migration step when that is every migration, and applies newer ones otherwise.
 */
export async function openEphemeralPglite(
  options: { vector?: boolean; files?: EphemeralFiles } = {},
): Promise<{ db: PGlite; fromTemplate: boolean; migrations: string[] | null }> {
  const extensions = options.vector ? pgliteVectorExtensions : pgliteExtensions;
  const files = options.files ?? readEphemeralFiles();
  const template = await files.template;
  if (template === null) return { db: await openPglite(undefined, options), fromTemplate: false, migrations: null };
  const db = await loadPgliteTemplate(template, extensions, await files.engine);
  await removeUnread(db, files);
  return { db, fromTemplate: true, migrations: await files.manifest };
}

/**
 * A data directory's PGlite. A new directory is written from the template
 * rather than made by initdb: initdb runs a second WebAssembly PostgreSQL
 * whose memory the process keeps, and a sidecar on a fresh directory held
 * 485–546 MiB idle (831–885 MiB peak) against 160–175 MiB reopened. A
 * directory that exists opens as it is; without a template (a checkout
 * never built), initdb makes it. `migrations` as openEphemeralPglite's.
 */
export async function openDataDirPglite(
  dataDir: string,
  options: { vector?: boolean; files?: EphemeralFiles } = {},
): Promise<{ db: PGlite; fromTemplate: boolean; migrations: string[] | null }> {
  const extensions = options.vector ? pgliteVectorExtensions : pgliteExtensions;
  const files = options.files ?? readEphemeralFiles();
  const engine = await files.engine;
  const template = existsSync(join(dataDir, "PG_VERSION")) ? null : await files.template;
  if (template === null) {
    const db = await PGlite.create(dataDir, { extensions, startParams: [...SIDECAR_START_PARAMS], ...engine });
    await removeUnread(db, files);
    return { db, fromTemplate: false, migrations: null };
  }
  const db = await PGlite.create(dataDir, { loadDataDir: template, extensions, startParams: [...SIDECAR_START_PARAMS], ...engine });
  await removeUnread(db, files);
  return { db, fromTemplate: true, migrations: await files.manifest };
}

/** Once the database answers: the bundle's files left unread (pglite-bundle.ts) go, so that nothing reads their zeros. */
async function removeUnread(db: PGlite, files: EphemeralFiles): Promise<void> {
  const unread = await files.unread;
  if (unread) removeUnreadFiles(pgliteFs(db), unread);
}

/**
 * An in-memory PGlite loaded from a template dump (buildPgliteTemplate's),
 * its files views of the dump's bytes (template-fs.ts); `engine`: PGlite's own files, already read.
 */
export async function loadPgliteTemplate(template: Blob | Uint8Array, extensions: Extensions, engine?: PgliteEngine): Promise<PGlite> {
  // The bytes become the database's files (template-fs.ts): a Blob's are read anew, a caller's array is copied (not viewed, as Buffer.slice would).
  const tar = template instanceof Blob ? new Uint8Array(await template.arrayBuffer()) : new Uint8Array(template);
  return PGlite.create({ fs: new TemplateFs(tar), extensions, startParams: [...TEMPLATE_START_PARAMS], ...engine });
}

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { loadMigrations, migrate } from "./migrate.js";
import { createPgliteClient, openPglite, pgliteExtensions, pgliteVectorExtensions } from "./pglite-client.js";

/**
 * The ephemeral store: an in-memory PGlite loaded from a migrated template
 * that `npm run build` writes (dist/pglite-template.tar). Creating a PGlite
 * database runs initdb in WebAssembly, which is most of a fresh directory's
 * start-up; loading a dump skips it. See docs/adr/0007.
 */

/** RECALL_DATA_DIR value (and `recall serve --ephemeral`) for the in-memory store. */
export const EPHEMERAL_DATA_DIR = "memory://";

/** Build output at the package root, found from src/store and dist/store alike. */
export const PGLITE_TEMPLATE_PATH = fileURLToPath(new URL("../../dist/pglite-template.tar", import.meta.url));

/** A fresh in-memory database with every migration applied, dumped as an uncompressed tarball. */
export async function buildPgliteTemplate(): Promise<Blob> {
  const db = await openPglite(undefined);
  try {
    await migrate(createPgliteClient(db), await loadMigrations());
    // Uncompressed: gunzip at every start would cost more than the larger file's read.
    return await db.dumpDataDir("none");
  } finally {
    await db.close();
  }
}

/**
 * An in-memory PGlite from the shipped template, or, where the template is
 * missing (a checkout that was never built), a fresh one: correct, only slow.
 * Migrations newer than the template are applied by openStore as usual.
 */
export async function openEphemeralPglite(options: { vector?: boolean } = {}): Promise<{ db: PGlite; fromTemplate: boolean }> {
  const extensions = options.vector ? pgliteVectorExtensions : pgliteExtensions;
  const template = await readFile(PGLITE_TEMPLATE_PATH).catch(() => null);
  if (template === null) return { db: await openPglite(undefined, options), fromTemplate: false };
  return { db: await PGlite.create({ loadDataDir: new Blob([template]), extensions }), fromTemplate: true };
}

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { loadMigrations, migrate, type Migration } from "./migrate.js";
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
/** Beside it: the migrations the template holds, so a start can tell it needs none (JSON list of "0001_initial", …). */
export const PGLITE_TEMPLATE_MANIFEST = fileURLToPath(new URL("../../dist/pglite-template.json", import.meta.url));

/** A migration's name in the manifest. */
export const migrationKey = (m: Migration) => `${String(m.version).padStart(4, "0")}_${m.name}`;

/** A fresh in-memory database with every migration applied, dumped as an uncompressed tarball. */
export async function buildPgliteTemplate(migrations?: Migration[]): Promise<Blob> {
  const db = await openPglite(undefined);
  try {
    await migrate(createPgliteClient(db), migrations ?? (await loadMigrations()));
    // A checkpoint first, so a database loaded from the dump has no WAL to replay at start.
    await db.exec("CHECKPOINT");
    // Uncompressed: gunzip at every start would cost more than the larger file's read.
    return await db.dumpDataDir("none");
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
  options: { vector?: boolean } = {},
): Promise<{ db: PGlite; fromTemplate: boolean; migrations: string[] | null }> {
  const extensions = options.vector ? pgliteVectorExtensions : pgliteExtensions;
  const template = await readFile(PGLITE_TEMPLATE_PATH).catch(() => null);
  if (template === null) return { db: await openPglite(undefined, options), fromTemplate: false, migrations: null };
  const manifest = await readFile(PGLITE_TEMPLATE_MANIFEST, "utf8").then((text) => JSON.parse(text) as string[], () => null);
  return { db: await PGlite.create({ loadDataDir: new Blob([template]), extensions }), fromTemplate: true, migrations: manifest };
}

import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { loadMigrations, migrationKey } from "../migrate.js";
import { PGLITE_BUNDLE_LAYOUT, PGLITE_TEMPLATE_MANIFEST, PGLITE_TEMPLATE_PATH, pgliteFile } from "../ephemeral-start.js";
import { bundleLayout, pgliteFs } from "./pglite-bundle.js";
import { pgliteExtensions } from "./pglite-client.js";
import { buildPgliteTemplate, loadPgliteTemplate } from "./pglite-template.js";

/**
 * Build step (`npm run build`): writes the migrated PGlite template that the
 * ephemeral store loads, and where the files a database loaded from it never
 * reads lie in PGlite's bundle (pglite-bundle.ts), found in a PGlite loaded
 * from it. Build output, never committed, never made at start-up.
 */
const migrations = await loadMigrations();
const template = await buildPgliteTemplate(migrations);
await mkdir(dirname(PGLITE_TEMPLATE_PATH), { recursive: true });
await writeFile(PGLITE_TEMPLATE_PATH, Buffer.from(await template.arrayBuffer()));
await writeFile(PGLITE_TEMPLATE_MANIFEST, `${JSON.stringify(migrations.map(migrationKey))}\n`);
const db = await loadPgliteTemplate(new Uint8Array(await template.arrayBuffer()), pgliteExtensions);
try {
  const layout = bundleLayout(pgliteFs(db), (await stat(pgliteFile("pglite.data"))).size);
  await writeFile(PGLITE_BUNDLE_LAYOUT, `${JSON.stringify(layout)}\n`);
} finally {
  await db.close();
}
process.stdout.write(`wrote ${PGLITE_TEMPLATE_PATH} (${(template.size / 1024 / 1024).toFixed(1)} MiB)\n`);

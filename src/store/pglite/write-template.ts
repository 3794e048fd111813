import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { loadMigrations, migrationKey } from "../migrate.js";
import { PGLITE_TEMPLATE_MANIFEST, PGLITE_TEMPLATE_PATH } from "../ephemeral-start.js";
import { buildPgliteTemplate } from "./pglite-template.js";

/**
 * Build step (`npm run build`): writes the migrated PGlite template that the
 * ephemeral store loads. Build output, never committed, never made at start-up.
 */
const migrations = await loadMigrations();
const template = await buildPgliteTemplate(migrations);
await mkdir(dirname(PGLITE_TEMPLATE_PATH), { recursive: true });
await writeFile(PGLITE_TEMPLATE_PATH, Buffer.from(await template.arrayBuffer()));
await writeFile(PGLITE_TEMPLATE_MANIFEST, `${JSON.stringify(migrations.map(migrationKey))}\n`);
process.stdout.write(`wrote ${PGLITE_TEMPLATE_PATH} (${(template.size / 1024 / 1024).toFixed(1)} MiB)\n`);

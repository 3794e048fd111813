import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildPgliteTemplate } from "../../src/store/pglite/pglite-template.js";

/**
 * Creating and migrating a PGlite database takes seconds, so it is done once
 * per run: the migrated template is dumped to a file that every test loads
 * (test/support/stores.ts), which is much faster than migrating per file.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "recall-template-"));
  const dump = await buildPgliteTemplate();
  const path = join(dir, "template.tar");
  await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  project.provide("pgliteTemplate", path);
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}

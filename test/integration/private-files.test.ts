import { lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 44, item 3: files that hold memory are the process user's alone. A
 * PGlite data directory is 0700 with its files 0600 even under umask 0 (PGlite
 * lays its template out 0666). A folder open to other users is refused at
 * start: test/integration/startup-errors.test.ts.
 */

/** Every folder and file under `dir` (itself included) that is not private: "mode path". */
async function notPrivate(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string) => {
    const st = await lstat(path);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) found.push(`${mode.toString(8)} ${path}`);
      for (const name of await readdir(path)) await walk(join(path, name));
    } else if (st.isFile() && mode !== 0o600) found.push(`${mode.toString(8)} ${path}`);
  };
  await walk(dir);
  return found;
}

describe("private files", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-private-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a PGlite data directory 0700 and its files 0600, even under umask 0", async () => {
    const dataDir = join(dir, "fresh", "data");
    const umask = process.umask(0); // inherited by the sidecar process
    const sidecar = await startSidecarProcess("pglite", {}, { dataDir }).finally(() => process.umask(umask));
    const c = connect(sidecar.address);
    try {
      const me = newIdentity();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "veetbot", statement: "veetbot deploys to Fly.io." })] }, me);
      await unary(c.memory, "Search", { text: "how does veetbot deploy" }, me);
    } finally {
      c.close();
      await sidecar.stop();
    }
    expect(await notPrivate(join(dir, "fresh"))).toEqual([]);
  });
});

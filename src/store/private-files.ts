import { chmod, lstat, mkdir, open, readdir, stat, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { StartupError } from "../domain/startup-error.js";

/**
 * Files that hold memory (the embedded store, the trace spool and its
 * quarantine, the warm list) are the process user's alone: folders 0700,
 * files 0600, whatever the umask, as PostgreSQL keeps its data directory.
 * A folder that is already there and open to group or other users is
 * refused at start, as PostgreSQL refuses one: loosening it is a decision
 * the operator makes, not one the sidecar hides.
 */

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
const OPEN_TO_OTHERS = 0o077;

/**
 * Creates `dir` (and any missing parent) 0700, or checks the one that is
 * there: a StartupError naming the folder (`label`, `setting`) and the fix
 * when group or other users may enter it.
 */
export async function ensurePrivateDir(dir: string, label: string, setting: string): Promise<void> {
  const before = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (before === null) {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // A umask may have taken owner bits; chmod is exact.
    await chmod(dir, PRIVATE_DIR_MODE);
    return;
  }
  if (!before.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: "ENOTDIR" });
  const mode = before.mode & 0o777;
  if ((mode & OPEN_TO_OTHERS) !== 0) {
    throw new StartupError(
      `${label} ${dir} (${setting}) is open to other users (mode ${mode.toString(8).padStart(4, "0")}) and holds memory: run chmod 700 ${dir}`,
    );
  }
}

/** Opens (creating 0600) a file of a private folder; an existing file is made 0600 too. */
export async function openPrivateFile(path: string, flags: string): Promise<FileHandle> {
  const file = await open(path, flags, PRIVATE_FILE_MODE);
  try {
    if (((await file.stat()).mode & 0o777) !== PRIVATE_FILE_MODE) await file.chmod(PRIVATE_FILE_MODE);
  } catch (error) {
    await file.close();
    throw error;
  }
  return file;
}

/** writeFile, 0600 whatever the umask (and whatever the file's mode was). */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  await writeFile(path, data, { mode: PRIVATE_FILE_MODE });
  await chmod(path, PRIVATE_FILE_MODE);
}

/**
 * Makes every folder under `dir` 0700 and every file 0600 (symlinks are left
 * alone). PGlite lays its data directory out 0666 and 0755 (from its
 * template), whatever the umask; what it creates later is inside these folders.
 */
export async function tightenTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await tighten(path, PRIVATE_DIR_MODE);
      await tightenTree(path);
    } else if (entry.isFile()) {
      await tighten(path, PRIVATE_FILE_MODE);
    }
  }
}

async function tighten(path: string, mode: number): Promise<void> {
  const st = await lstat(path).catch(() => null);
  // Gone meanwhile (PostgreSQL removes temporary files): nothing to tighten.
  if (st && (st.mode & 0o777) !== mode) await chmod(path, mode).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e;
  });
}

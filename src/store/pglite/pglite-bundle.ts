import { open, type FileHandle } from "node:fs/promises";

/**
 * PGlite's file-system bundle (its pglite.data: PostgreSQL's share/ and lib/
 * folders, 6 MB) as a database that initdb does not make needs it. PGlite
 * takes the bundle as one buffer and makes each of its files a view of that
 * buffer in its in-memory file system, so every byte read in stays resident
 * for the life of the database. A third of it is never read by a store
 * loaded from the template or reopened from its directory: initdb's input,
 * the files to build extensions with, ICU's collation data (the database's
 * collation is libc's "C"), encoding conversions (the sidecar is PGlite's only
 * client and speaks UTF-8, as the database does) and replication's modules.
 *
 * `npm run build` finds where those files lie in the bundle (a PGlite's own
 * file system knows each file's offset) and writes it beside the template;
 * at start the bundle is read into memory that is not the allocator's and
 * the holes are left unread, pages never touched and so never resident; once
 * the database answers those files are removed from its file system, so
 * nothing can read their zeros. See docs/adr/0026.
 */

/** Where the unread files lie in the bundle, as the build found them. */
export interface BundleLayout {
  /** The bundle's size: a layout for another PGlite's bundle is not used. */
  bundleBytes: number;
  /** The files left unread, as PGlite's file system names them. */
  paths: string[];
  /** Their bytes, as [start, end) offsets in the bundle, merged and in order. */
  holes: [number, number][];
}

/** Whether a file of the bundle is one that a database not made by initdb never reads (see above). */
export function unreadOnceMade(path: string): boolean {
  return (
    // initdb's input (postgres.bki, information_schema.sql, the *.sample files, …) and PostgreSQL's lists.
    /^\/pglite\/share\/postgresql\/[^/]+\.(bki|sql|txt|sample)$/.test(path) ||
    path.startsWith("/pglite/lib/postgresql/pgxs/") ||
    path.startsWith("/pglite/icu/") ||
    /^\/pglite\/lib\/postgresql\/(\w+_and_\w+|euc2004_sjis2004|libpqwalreceiver|pgoutput)\.so$/.test(path)
  );
}

/** The part of PGlite's Emscripten file system this module uses. */
interface EmscriptenFs {
  readdir(path: string): string[];
  stat(path: string): { mode: number };
  isDir(mode: number): boolean;
  lookupPath(path: string): { node: { contents?: unknown } };
  unlink(path: string): void;
  analyzePath(path: string): { exists: boolean };
}

/** PGlite's file system (its Emscripten module's). */
export function pgliteFs(db: { Module: unknown }): EmscriptenFs {
  return (db.Module as { FS: EmscriptenFs }).FS;
}

/**
 * Where the files `unread` picks lie in the bundle of a running PGlite: each
 * of its files is a view of the bundle's one buffer, `bundleBytes` long.
 */
export function bundleLayout(fs: EmscriptenFs, bundleBytes: number, unread: (path: string) => boolean = unreadOnceMade): BundleLayout {
  const paths: string[] = [];
  const ranges: [number, number][] = [];
  const walk = (dir: string) => {
    for (const name of fs.readdir(dir)) {
      if (name === "." || name === "..") continue;
      const path = `${dir}/${name}`;
      if (fs.isDir(fs.stat(path).mode)) {
        walk(path);
        continue;
      }
      if (!unread(path)) continue;
      const contents = fs.lookupPath(path).node.contents;
      // Only a view of the bundle itself (a file written since would be a buffer of its own).
      if (!(contents instanceof Uint8Array) || contents.buffer.byteLength !== bundleBytes) continue;
      paths.push(path);
      if (contents.byteLength > 0) ranges.push([contents.byteOffset, contents.byteOffset + contents.byteLength]);
    }
  };
  walk("/pglite");
  ranges.sort((a, b) => a[0] - b[0]);
  const holes: [number, number][] = [];
  for (const [start, end] of ranges) {
    const last = holes.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else holes.push([start, end]);
  }
  return { bundleBytes, paths: paths.sort(), holes };
}

/**
 * The bundle's bytes but its holes, in a buffer the allocator does not own
 * (a resizable ArrayBuffer is memory V8 maps itself): the holes' pages are
 * never touched, so never resident. Its length is the file's, as PGlite
 * checks. null when the file is not the bundle the layout was made from.
 */
export async function readBundleWithHoles(path: string | URL, layout: BundleLayout): Promise<ArrayBuffer | null> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    if (size !== layout.bundleBytes) return null;
    const buffer = new ResizableArrayBuffer(size, { maxByteLength: size });
    const bytes = new Uint8Array(buffer);
    let at = 0;
    for (const [start, end] of [...layout.holes, [size, size] as const]) {
      await readRange(file, bytes, at, start, path);
      at = end;
    }
    return buffer;
  } finally {
    await file.close();
  }
}

/** Bytes [from, to) of an open file into the same offsets of `into` (a read may return fewer than asked). */
export async function readRange(file: FileHandle, into: Uint8Array, from: number, to: number, path: string | URL): Promise<void> {
  for (let pos = from; pos < to; ) {
    const { bytesRead } = await file.read(into, pos, to - pos, pos);
    if (bytesRead === 0) throw new Error(`${String(path)} ended before byte ${to}`);
    pos += bytesRead;
  }
}

/** ArrayBuffer's constructor with ES2024's options (not in this project's lib). */
const ResizableArrayBuffer = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ArrayBuffer;

/** Removes the files left unread from a running PGlite's file system (they read as zeros). */
export function removeUnreadFiles(fs: EmscriptenFs, layout: BundleLayout): void {
  for (const path of layout.paths) if (fs.analyzePath(path).exists) fs.unlink(path);
}

/** Uncompressed tarballs (ustar, as PGlite's dumpDataDir writes them), read in place. */
const BLOCK = 512;

/**
 * The entries of a tarball without those `drop` names, every kept header and
 * data block copied as it was: no re-encoding, so PGlite's loader reads it as its own.
 */
export function withoutTarEntries(tar: Uint8Array, drop: (name: string) => boolean): Uint8Array {
  const kept: Uint8Array[] = [];
  for (const entry of tarEntries(tar)) if (!drop(entry.name)) kept.push(tar.subarray(entry.at, entry.end));
  kept.push(new Uint8Array(2 * BLOCK)); // the end-of-archive marker
  const out = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of kept) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The regular files and folders of an uncompressed tarball, each file's data a view of the tarball's bytes. */
export function* tarFiles(tar: Uint8Array): Generator<{ name: string; folder: boolean; data: Uint8Array }> {
  for (const { name, type, data } of tarEntries(tar)) {
    if (type === "file" || type === "folder") yield { name, folder: type === "folder", data };
  }
}

/** Every entry: its header's offset, the offset past its data blocks, and its data. */
function* tarEntries(tar: Uint8Array): Generator<{ name: string; type: "file" | "folder" | "other"; at: number; end: number; data: Uint8Array }> {
  let at = 0;
  while (at + BLOCK <= tar.length && tar.subarray(at, at + BLOCK).some((b) => b !== 0)) {
    const header = tar.subarray(at, at + BLOCK);
    const name = field(header, 0, 100);
    // Only regular files ("0", or NUL in old archives) carry data; the size is octal text. Folders are "5".
    const flag = header[156];
    const type = flag === 0x30 || flag === 0 ? "file" : flag === 0x35 ? "folder" : "other";
    const size = type === "file" ? parseInt(field(header, 124, 12).trim() || "0", 8) : 0;
    const end = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (end > tar.length) throw new Error(`tarball truncated in the entry ${name}`);
    yield { name, type, at, end, data: tar.subarray(at + BLOCK, at + BLOCK + size) };
    at = end;
  }
}

/** A NUL-terminated text field of a header. */
function field(header: Uint8Array, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const nul = bytes.indexOf(0);
  return new TextDecoder().decode(nul === -1 ? bytes : bytes.subarray(0, nul));
}

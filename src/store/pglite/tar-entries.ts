/**
 * The entries of an uncompressed tarball (ustar, as PGlite's dumpDataDir
 * writes it) without those `drop` names, every kept header and data block
 * copied as it was: no re-encoding, so PGlite's loader reads it as its own.
 */
const BLOCK = 512;

export function withoutTarEntries(tar: Uint8Array, drop: (name: string) => boolean): Uint8Array {
  const kept: Uint8Array[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length && tar.subarray(offset, offset + BLOCK).some((b) => b !== 0)) {
    const header = tar.subarray(offset, offset + BLOCK);
    const name = field(header, 0, 100);
    // Only regular files ("0", or NUL in old archives) carry data; the size is octal text.
    const type = header[156];
    const size = type === 0x30 || type === 0 ? parseInt(field(header, 124, 12).trim() || "0", 8) : 0;
    const end = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (end > tar.length) throw new Error(`tarball truncated in the entry ${name}`);
    if (!drop(name)) kept.push(tar.subarray(offset, end));
    offset = end;
  }
  kept.push(new Uint8Array(2 * BLOCK)); // the end-of-archive marker
  const out = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of kept) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A NUL-terminated text field of a header. */
function field(header: Uint8Array, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const nul = bytes.indexOf(0);
  return new TextDecoder().decode(nul === -1 ? bytes : bytes.subarray(0, nul));
}

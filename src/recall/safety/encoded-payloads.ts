/**
 * Encoded payloads: an instruction hidden as base64, hex or percent-encoding
 * still reaches a model that is asked (or simply able) to decode it. Runs
 * that decode to readable text are handed back for the scan to read; runs
 * that decode to bytes (hashes, ids, keys, ordinary long words) are not.
 * Pure and bounded: at most MAX_RUNS runs per text, nested MAX_DEPTH deep.
 */

const MAX_RUNS = 16;
const MAX_DEPTH = 2;

/** Long enough that an ordinary word rarely qualifies (and would decode to bytes if it did). */
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const HEX_RUN = /\b(?:\\x|0x)?(?:[0-9a-fA-F]{2}(?:\\x|[ :]|0x)?){8,}/g;
const PERCENT_RUN = /(?:%[0-9a-fA-F]{2}){4,}/g;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Every readable text decoded from the runs in `text`, and from the runs in those, in order. */
export function decodedPayloads(text: string, depth = 1): string[] {
  const out: string[] = [];
  for (const decoded of decodeRuns(text)) {
    out.push(decoded);
    if (depth < MAX_DEPTH) out.push(...decodedPayloads(decoded, depth + 1));
  }
  return [...new Set(out)];
}

function decodeRuns(text: string): string[] {
  const runs: string[] = [];
  for (const m of text.matchAll(BASE64_RUN)) runs.push(fromBytes(Buffer.from(m[0].replace(/-/g, "+").replace(/_/g, "/"), "base64")));
  for (const m of text.matchAll(HEX_RUN)) {
    const digits = m[0].replace(/\\x|0x|[ :]/g, "");
    if (digits.length % 2 === 0) runs.push(fromBytes(Buffer.from(digits, "hex")));
  }
  for (const m of text.matchAll(PERCENT_RUN)) runs.push(fromBytes(Buffer.from(m[0].replace(/%/g, ""), "hex")));
  return runs.filter((r) => r !== "" && looksLikeText(r)).slice(0, MAX_RUNS);
}

function fromBytes(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return "";
  }
}

/**
 * Readable: at least 8 characters, nearly all of them letters, digits,
 * punctuation or spaces, half of them letters, and at least two words.
 */
export function looksLikeText(s: string): boolean {
  if (s.length < 8) return false;
  const chars = [...s];
  const printable = chars.filter((c) => /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\n\t]/u.test(c)).length;
  const letters = chars.filter((c) => /\p{L}/u.test(c)).length;
  const words = s.match(/\p{L}{2,}/gu)?.length ?? 0;
  return printable / chars.length >= 0.95 && letters / chars.length >= 0.5 && words >= 2;
}

import { StringMemo } from "../../domain/string-memo.js";

/**
 * Approximate model token count. Model tokenizers (BPE, e.g. cl100k/o200k)
 * give common English words one token, split long or rare words into pieces
 * of about four characters, give punctuation and digits their own tokens
 * (digits in groups of up to three), and CJK scripts about one per character.
 * Counting those pieces the same way lands within a few percent of them on
 * English prose, with no tokenizer tables to ship.
 */
const CJK = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}";
// Han, kana and Hangul are written without spaces and tokenized about one token per character.
const PIECE = new RegExp(`[${CJK}]|(?:(?![${CJK}])[\\p{L}\\p{M}])+|\\p{N}{1,3}|[^\\s\\p{L}\\p{M}\\p{N}]`, "gu");
const CJK_CHAR = new RegExp(`^[${CJK}]$`, "u");

/**
 * The count of `text`. A line's count is remembered: recall after recall
 * weighs the same beliefs' lines, and a lookup is a small fraction of a
 * count (the in-turn recall spent 0.16 ms a call counting, in process).
 * Longer texts (a whole block) are rarely asked twice, and counted each time.
 */
export function countTokens(text: string): number {
  return text.length <= MEMO_MAX_LENGTH ? LINE_TOKENS.of(text, countPieces) : countPieces(text);
}

/** Lines up to this many characters are remembered, at most LINE_TOKENS_MAX of them (an estimated 4 MiB). */
const MEMO_MAX_LENGTH = 512;
const LINE_TOKENS_MAX = 16_384;
const LINE_TOKENS = new StringMemo<number>(LINE_TOKENS_MAX);

function countPieces(text: string): number {
  let tokens = 0;
  for (const piece of text.match(PIECE) ?? []) {
    if (CJK_CHAR.test(piece)) {
      tokens += 1;
    } else if (/^[\p{L}\p{M}]+$/u.test(piece)) {
      // Words up to 8 letters are usually one token; longer ones split about every 4-5 letters.
      tokens += piece.length <= 8 ? 1 : Math.ceil(piece.length / 4.5);
    } else {
      tokens += 1;
    }
  }
  return tokens;
}

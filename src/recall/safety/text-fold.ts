import { createRequire } from "node:module";

/**
 * The view of a statement that the injection rules match against, so that
 * what a model would read as "ignore previous instructions" is matched
 * whatever code points spell it. Never rendered: the block shows the
 * statement as stored.
 *
 * 1. NFKC: compatibility forms become their plain letters (full-width,
 *    mathematical alphanumerics, ligatures, circled letters).
 * 2. Invisible and format characters (zero-width spaces and joiners, word
 *    joiner, soft hyphen, bidi controls, tag characters, variation
 *    selectors: every Default_Ignorable_Code_Point and Cf) are removed, so
 *    an instruction split by them reads whole (foldedViews also reads them
 *    as spaces, for an instruction whose spaces they replace).
 * 3. Combining marks are removed ("ïgnörè" reads "ignore").
 * 4. Every non-ASCII character with an entry in Unicode's confusables table
 *    (confusables.txt, as shipped by `unhomoglyph`) is replaced by its
 *    Latin skeleton, in lower case: Cyrillic "о", Greek "ο" and Armenian
 *    "օ" all read "o". ASCII is only lower-cased: the table's own ASCII
 *    folds (m → rn, 1 → l) would turn ordinary words into others.
 * 5. Runs of whitespace become one space; newlines are kept, for the rules
 *    about turns that start a line.
 */

const CONFUSABLES: Readonly<Record<string, string>> = createRequire(import.meta.url)("unhomoglyph/data.json");

const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
const HAS_INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/u;
const MARKS = /\p{M}/gu;

/**
 * The folded views of a statement: invisible characters removed (they split
 * a word) and, when there are any, read as spaces (they stand for the
 * spaces between words). A rule that matches either view matches.
 */
export function foldedViews(text: string): string[] {
  const joined = foldText(text, "");
  if (!HAS_INVISIBLE.test(text)) return [joined];
  const spaced = foldText(text, " ");
  return joined === spaced ? [joined] : [joined, spaced];
}

export function foldText(text: string, invisibleAs: "" | " " = ""): string {
  const stripped = text.normalize("NFKC").replace(INVISIBLE, invisibleAs).normalize("NFD").replace(MARKS, "");
  let out = "";
  for (const ch of stripped) out += ch.charCodeAt(0) > 0x7f ? latinSkeleton(ch) : ch.toLowerCase();
  return out.replace(/[^\S\n]+/g, " ").replace(/ ?\n\s*/g, "\n").trim();
}

/**
 * The lower-case Latin skeleton of one non-ASCII character. The table is
 * looked up before lower-casing (Greek "Υ" looks like Y, its lower case "υ"
 * like u), and the table folds every capital-I look-alike to "l" (its
 * skeleton of I), which for an upper-case character is read as "i".
 */
function latinSkeleton(ch: string): string {
  const skeleton = CONFUSABLES[ch] ?? CONFUSABLES[ch.toLowerCase()];
  if (skeleton === undefined) return ch.toLowerCase();
  if (skeleton === "l" && ch !== ch.toLowerCase()) return "i";
  return skeleton.toLowerCase();
}

/** The folded text on one line: what the sentence-level rules read. */
export function flatten(folded: string): string {
  return folded.replace(/\n/g, " ");
}

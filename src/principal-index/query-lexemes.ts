import { stem } from "porter2";

/**
 * The query side of PostgreSQL's `english` text search configuration, in
 * process: the lexeme `to_tsvector('english', term)` gives for one lexical
 * term (query-former.ts lexicalTerms: lower-cased runs of letters and
 * digits). The belief side stays PostgreSQL's: postings are built from the
 * tsvectors it computed at write time (sql/0005_lexicon.sql).
 *
 * - ASCII letters are an `asciiword`: dropped when a stop word, otherwise
 *   stemmed by Snowball English (npm porter2; checked against PostgreSQL on
 *   the project's data, test/store/query-lexemes.test.ts);
 * - ASCII digits, or a letter followed by letters and digits, are `uint`/`numword`, which
 *   the configuration maps to the `simple` dictionary: the term itself;
 * - anything else (non-ASCII letters or digits), and words whose stem
 *   depends on the Snowball release (undoubling), are not decided here: the
 *   caller asks PostgreSQL (undefined).
 */

/** PostgreSQL's tsearch_data/english.stop (the Snowball English stop list), 127 words. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers " +
    "herself it its itself they them their theirs themselves what which who whom this that these those am is are " +
    "was were be been being have has had having do does did doing a an the and but if or because as until while " +
    "of at by for with about against between into through during before after above below to from up down in out " +
    "on off over under again further then once here there when where why how all any both each few more most " +
    "other some such no nor not only own same so than too very s t can will just don should now"
  ).split(" "),
);

const UNDOUBLING = /(bb|dd|ff|gg|mm|nn|pp|rr|tt)(ed|edly|ing|ingly)$/;

/** The term's lexeme; null when PostgreSQL drops it (a stop word); undefined when only PostgreSQL can tell. */
export function termLexeme(term: string): string | null | undefined {
  if (/^[a-z]+$/.test(term)) {
    if (ENGLISH_STOP_WORDS.has(term)) return null;
    // Snowball releases differ on undoubling before -ed/-ing ("added": PostgreSQL 15 "ad", PGlite's
    // PostgreSQL 17 "add"): left to the store's own stemmer.
    if (UNDOUBLING.test(term)) return undefined;
    return stem(term);
  }
  // A leading digit can start a float ("5e9d3c11" parses as 5e9 and d3c11): left to PostgreSQL.
  if (/^[0-9]+$/.test(term) || /^[a-z][a-z0-9]*$/.test(term)) return term;
  return undefined;
}

import { writeFile } from "node:fs/promises";

/**
 * `recall eval locomo FILE --details OUT`: one JSON line per question, so
 * misses can be read: the question, its category and evidence, which of the
 * evidence any loaded belief cites (the ceiling), the ranked list with each
 * item's arms, score and provenance, and the ids the production-size block
 * rendered. The file holds the data set's text: write it outside the repository.
 */

export interface RankedDetail {
  beliefId: string;
  statement: string;
  /** The dia_ids the belief was observed in. */
  dia: string[];
  arms: string[];
  score: number;
  /** Cites one of the question's evidence ids. */
  relevant: boolean;
}

export interface QuestionDetail {
  conversation: string;
  question: string;
  category: number;
  evidence: string[];
  /** The evidence ids some loaded belief cites. */
  citedEvidence: string[];
  ranked: RankedDetail[];
  /** Belief ids of the block rendered at the injected caps, in order. */
  injected: string[];
  injectedTokens: number;
}

export async function writeDetails(file: string, details: readonly QuestionDetail[]): Promise<void> {
  await writeFile(file, details.map((d) => JSON.stringify(d)).join("\n") + (details.length > 0 ? "\n" : ""), "utf8");
}

import type { EligibilityFilter } from "../../domain/hard-filter.js";
import type { CandidateSource } from "../../ports/candidate-source.js";
import type { RetrievalPolicy } from "../policy.js";
import { dateMentions, lexicalTerms, namedPhrases, nameLikeWords } from "../query-former.js";
import type { RecallArm } from "./arm.js";

/**
 * Lexical arm (always on): BM25F over each belief's subject, statement and
 * source-episode context, OR semantics (strict AND matches nothing for most
 * real questions). First the subjects the question names are resolved —
 * exact phrases, and capitalised words by trigram similarity so a misspelt
 * name still finds its subject (whose name then joins the terms) — then one
 * scored query. Beliefs about a named subject, and from a named month or
 * year, are boosted (policy.lexical).
 */
export function lexicalArm(
  source: CandidateSource,
  filter: EligibilityFilter,
  text: string | null,
  namedSubjects: readonly string[],
  policy: RetrievalPolicy,
): RecallArm {
  return {
    name: "lexical",
    async run(signal) {
      const terms = lexicalTerms(text);
      if (terms.length === 0) return [];
      const { trigram, ...scoring } = policy.lexical;
      const resolved = await source.resolveNamedSubjects(
        filter,
        namedPhrases(text),
        nameLikeWords(text, trigram.minWordLength),
        trigram.minSimilarity,
        { signal },
      );
      const corrected = resolved.fuzzy.flatMap((name) => lexicalTerms(name)).filter((t) => !terms.includes(t));
      return source.lexicalCandidates(
        filter,
        {
          terms: [...terms, ...new Set(corrected)],
          names: [...new Set([...namedSubjects, ...resolved.exact, ...resolved.fuzzy])].sort(),
          dates: dateMentions(text),
          scoring,
        },
        policy.candidateCap,
        { signal },
      );
    },
  };
}

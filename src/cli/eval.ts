import { parseArgs } from "node:util";
import { DEFAULT_HASHED_DIMENSIONS, type Config } from "../config.js";
import { createEmbedder } from "../embed/create-embedder.js";
import { hashedEmbedder } from "../embed/hashed-embedder.js";
import { evaluateLocomo, formatLocomoReport } from "../eval/locomo-eval.js";

/**
 * `recall eval locomo FILE [--conversations N] [--questions N] [--subjects] [--semantic] [--json]`.
 * --semantic adds the semantic arm with the configured embedder (RECALL_EMBEDDER…), or the hashed one when
 * RECALL_SEMANTIC is off.
 */
export async function runEval(args: string[], config?: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      conversations: { type: "string" },
      questions: { type: "string" },
      json: { type: "boolean", default: false },
      subjects: { type: "boolean", default: false },
      semantic: { type: "boolean", default: false },
    },
  });
  const [suite, file] = positionals;
  if (suite !== "locomo" || !file) {
    process.stderr.write("usage: recall eval locomo FILE [--conversations N] [--questions N] [--subjects] [--semantic] [--json]\n");
    return 2;
  }
  const report = await evaluateLocomo(file, {
    conversations: values.conversations ? Number(values.conversations) : undefined,
    questionsPerConversation: values.questions ? Number(values.questions) : undefined,
    subjects: values.subjects,
    ...(values.semantic
      ? { semantic: config?.semantic ? createEmbedder(config.semantic) : hashedEmbedder(DEFAULT_HASHED_DIMENSIONS) }
      : {}),
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatLocomoReport(report)}\n`);
  return 0;
}

import { parseArgs } from "node:util";
import { evaluateLocomo, formatLocomoReport } from "../eval/locomo-eval.js";

/** `recall eval locomo FILE [--conversations N] [--questions N] [--subjects] [--json]` */
export async function runEval(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      conversations: { type: "string" },
      questions: { type: "string" },
      json: { type: "boolean", default: false },
      subjects: { type: "boolean", default: false },
    },
  });
  const [suite, file] = positionals;
  if (suite !== "locomo" || !file) {
    process.stderr.write("usage: recall eval locomo FILE [--conversations N] [--questions N] [--subjects] [--json]\n");
    return 2;
  }
  const report = await evaluateLocomo(file, {
    conversations: values.conversations ? Number(values.conversations) : undefined,
    questionsPerConversation: values.questions ? Number(values.questions) : undefined,
    subjects: values.subjects,
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatLocomoReport(report)}\n`);
  return 0;
}

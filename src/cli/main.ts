#!/usr/bin/env node
import { ConfigError, loadConfig } from "../config.js";
import { runDemo } from "./demo.js";
import { runEval } from "./eval.js";
import { runHealth } from "./health.js";
import { runImport } from "./import.js";
import { runReport } from "./report.js";
import { runServe } from "./serve.js";

const USAGE = `usage: recall <command> [options]

commands:
  serve                          start the sidecar (configured by RECALL_* environment variables)
  demo [--once]                  start on the embedded store, load demo memories, show a snapshot and an
                                 in-turn recall over gRPC; keeps serving unless --once
  import FILE.jsonl --tenant T --principal P
                                 load beliefs and episodes ({"belief": {...}} / {"episode": {...}} per line)
  health                         exit 0 when the sidecar on RECALL_HOST:RECALL_PORT answers SERVING
  eval locomo FILE [--conversations N] [--questions N] [--subjects] [--json]
                                 LoCoMo retrieval evaluation on a fresh embedded store, beside plain BM25
  report snapshots --tenant T --principal P [--session S]
                                 snapshot utilization and misses per session, from the traces (JSON)

Environment variables are listed in the README.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const config = loadConfig();
  switch (command) {
    case "serve":
      return runServe(config);
    case "demo":
      return runDemo(config, { once: args.includes("--once") });
    case "import":
      return runImport(config, args);
    case "health":
      return runHealth(config);
    case "report":
      return runReport(config, args);
    case "eval":
      return runEval(args);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`recall: unknown command "${command}"\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`recall: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`recall: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);

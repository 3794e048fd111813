#!/usr/bin/env node
import { ConfigError, loadConfig } from "../config.js";
import { DataDirLockedError } from "../store/data-dir-lock.js";
import { runDemo } from "./demo.js";
import { runErase } from "./erase.js";
import { runEval } from "./eval.js";
import { runDeleteSession, runEvents, runHints, runPromotions, runSweep } from "./feedback.js";
import { runHealth } from "./health.js";
import { runImport } from "./import.js";
import { runReport } from "./report.js";
import { runServe } from "./serve.js";
import { runTrace } from "./trace.js";

const USAGE = `usage: recall <command> [options]

commands:
  serve [--ephemeral]            start the sidecar (configured by RECALL_* environment variables);
                                 --ephemeral: an empty in-memory store (as RECALL_DATA_DIR=memory://)
  demo [--once]                  start on the embedded store, load demo memories, show a snapshot and an
                                 in-turn recall over gRPC; keeps serving unless --once
  import FILE.jsonl --tenant T --principal P
                                 load beliefs and episodes ({"belief": {...}} / {"episode": {...}} per line)
  health                         exit 0 when the sidecar on RECALL_HOST:RECALL_PORT answers SERVING
  eval locomo FILE [--conversations N] [--questions N] [--subjects] [--semantic] [--json]
                                 LoCoMo retrieval evaluation on a fresh embedded store, beside plain BM25
                                 (--semantic: with the semantic arm, configured or hashed embedder)
  eval benchmark [--record] [--json] [--fixture FILE] [--baseline FILE]
                                 the deterministic benchmark (npm run eval); exits 1 when it differs from
                                 the committed baseline; --record re-records it
  report snapshots --tenant T --principal P [--session S]
                                 snapshot utilization and misses per session, from the traces (JSON)
  trace TRACE_ID                 print the principal's persisted trace as JSON (GetTrace, operator form)
  trace --view TURN_ID [--surface CEILING|SURFACE_ID] [--ceiling CEILING]
                                 print the user view of a turn (GetTrace, user form)
  delete-session SESSION_ID      delete the session's traces, citations and memory.recalled events
  hints [--min-misses N]         subjects repeatedly queried with nothing rendered (re-derivation hints)
  promotions                     carried beliefs the model cited (promotion candidates)
  events [--all]                 the memory.recalled outbox, unpublished events first
  sweep                          run the retention and uncited-utility sweeps once, to completion
  erase --tenant T --principal P erase everything stored for the principal (ErasePrincipal), one transaction

Commands that read or change a principal's data take --tenant T --principal P, or
RECALL_TENANT_ID and RECALL_PRINCIPAL_ID; they open the configured store directly. A PGlite
directory is used by one process at a time: against a directory a sidecar holds they exit 2.

Environment variables are listed in the README.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const config = loadConfig();
  switch (command) {
    case "serve":
      return runServe(config, args);
    case "demo":
      return runDemo(config, { once: args.includes("--once") });
    case "import":
      return runImport(config, args);
    case "health":
      return runHealth(config);
    case "report":
      return runReport(config, args);
    case "eval":
      return runEval(args, config);
    case "trace":
      return runTrace(config, args);
    case "delete-session":
      return runDeleteSession(config, args);
    case "hints":
      return runHints(config, args);
    case "promotions":
      return runPromotions(config, args);
    case "events":
      return runEvents(config, args);
    case "sweep":
      return runSweep(config, args);
    case "erase":
      return runErase(config, args);
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
    if (error instanceof ConfigError || error instanceof DataDirLockedError) {
      process.stderr.write(`recall: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`recall: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);

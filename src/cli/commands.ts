import { parseArgs } from "node:util";
import type { Config } from "../config/config.js";
import { UsageError } from "./usage-error.js";

/**
 * Every `recall` command with its usage: the first line is what a usage
 * error prints (one line), the whole text is what `--help` prints. Usage is
 * answered here, before any configuration is read or any store opened, so
 * `--help` never has a side effect. A command's code is imported when it
 * runs: `recall serve` does not load the evaluation, the demo or the reports.
 */

export interface Command {
  readonly name: string;
  /** One line for the overview. */
  readonly summary: string;
  /** The whole `--help` text; its first line is the one-line usage. */
  readonly help: string;
  run(args: string[], config: Config): Promise<number>;
}

const PRINCIPAL_HELP = `  --tenant T, --principal P   the principal (default: RECALL_TENANT_ID, RECALL_PRINCIPAL_ID)

Opens the configured store directly (RECALL_DATABASE_URL, or PGlite in RECALL_DATA_DIR). A PGlite
directory is used by one process at a time: against a directory a sidecar holds, it exits 2.`;

export const COMMANDS: readonly Command[] = [
  {
    name: "serve",
    summary: "start the sidecar",
    help: `usage: recall serve [--ephemeral]
Start the sidecar: gRPC, gRPC-Web and Connect on RECALL_HOST:RECALL_PORT (and RECALL_SOCKET_PATH),
configured by the RECALL_* environment variables (README, "Configuration"). Stops gracefully on
SIGTERM or SIGINT.
  --ephemeral   an empty in-memory store, whatever the store settings say (as RECALL_DATA_DIR=memory://)`,
    run: async (args, config) => {
      parseArgs({ args, options: { ephemeral: { type: "boolean" } } });
      return (await import("./serve.js")).runServe(config, args);
    },
  },
  {
    name: "test-sidecar",
    summary: "a sidecar for another language's tests (recall_client.testing)",
    help: `usage: recall test-sidecar
A sidecar for an agent runtime's tests in another language (Python's recall_client.testing starts
it): configured by the RECALL_* environment (RECALL_DATA_DIR=memory:// for an in-memory store),
controlled by JSON lines. On stdin, first {"type":"fixtures","fixtures":[{"tenantId","principalId",
"file"|"jsonl"|"records"}]} (the \`recall import\` format), then {"type":"reset","id":N} or
{"type":"stop"}; on stdout {"type":"ready","port":P}, {"type":"reset-done","id":N},
{"type":"reset-failed","id":N,"message"} or {"type":"failed","message"}. Logs go to stderr.
Closing stdin stops it. reset erases every principal: never point it at data you want to keep.`,
    run: async (args) => {
      noArguments(args);
      return (await import("./test-sidecar.js")).runTestSidecar();
    },
  },
  {
    name: "mcp",
    summary: "an MCP server on stdio for a local host, bound to one principal",
    help: `usage: recall mcp [--address HOST:PORT | --socket PATH | --ephemeral] --tenant T --principal P
An MCP server on stdin/stdout for a local host (Claude Desktop or Code, Cursor, VS Code): the tools
memory_search, memory_recall_episodes and memory_recall, each a gRPC call to a running sidecar as the
one principal given (docs/mcp.md). Logs go to stderr; stdout carries the protocol only.
  --address HOST:PORT   the sidecar (default RECALL_HOST:RECALL_PORT)
  --socket PATH         the sidecar's Unix socket (RECALL_SOCKET_PATH) instead
  --ephemeral           start a sidecar in this process on an empty in-memory store with the demo
                        memory (principal demo-tenant/andy unless given)
  --scope PROJECT       the project the host works in (the searches' and recalls' current scope)
  --session ID          the session the calls are recorded under (default: one per process)
  --deadline-ms N       each call's deadline, retries on UNAVAILABLE included (default 5000)
  --token-file FILE     a sidecar in jwt mode: send the token in FILE (read again for each call);
                        the token names the principal (--address may be https://HOST:PORT)
  --tenant T, --principal P   the principal (default: RECALL_TENANT_ID, RECALL_PRINCIPAL_ID)`,
    run: async (args, config) => (await import("./mcp.js")).runMcp(config, args),
  },
  {
    name: "demo",
    summary: "the sidecar on the embedded store with demo memories",
    help: `usage: recall demo [--once] [--reset]
Start the sidecar on the embedded store (RECALL_DATA_DIR, default ./.recall-data), load a small demo
memory over gRPC, print a session-open snapshot and an in-turn recall with their trace ids, and keep
serving until Ctrl-C. Each start erases the demo principal (demo-tenant/andy) and loads its memory
again, so what the inspector changed lasts until the demo stops.
  --once    exit after printing
  --reset   wipe the data directory first and start it empty (refused when it holds memory of any
            other principal)`,
    run: async (args, config) => {
      const { values } = parseArgs({ args, options: { once: { type: "boolean", default: false }, reset: { type: "boolean", default: false } } });
      return (await import("./demo.js")).runDemo(config, values);
    },
  },
  {
    name: "ui",
    summary: "the memory inspector's address (starts a sidecar if none serves it)",
    help: `usage: recall ui [--tenant T --principal P]
Print the address of the memory inspector page (docs/inspector.md). A sidecar already serving it on
RECALL_PORT (started with RECALL_UI=on) is found and its address printed; otherwise a sidecar is
started here with the page on, its address printed, and it serves until Ctrl-C. In the
trusted-headers mode the address carries a token made for that start.
  --tenant T, --principal P   open the page on this principal's memory`,
    run: async (args, config) => (await import("./ui.js")).runUi(config, args),
  },
  {
    name: "import",
    summary: "load memories (recall, mem0, Graphiti/Zep, transcripts) into a store or a running sidecar",
    help: `usage: recall import FILE [--address HOST:PORT | --socket PATH] [options] --tenant T --principal P
Load beliefs and episodes from FILE: recall's JSON Lines ({"belief": {...}} or {"episode": {...}} a
line, protobuf JSON), mem0's get_all() output, Graphiti/Zep entity edges, or a chat transcript (JSON
Lines of role/content/time, or OpenAI messages); docs/importing.md maps each field. Every record is
checked before anything is written; bad ones are reported by line (up to 20). Then it is written in
batches, each one transaction. Progress goes to stderr.
  --address HOST:PORT   write into a running sidecar over gRPC (https:// for TLS)
  --socket PATH         ... through its Unix socket (RECALL_SOCKET_PATH)
  --token-file FILE     a sidecar in jwt mode: send the token in FILE (it names the principal)
  --format F            recall, mem0, graphiti or transcript (default: told from the file's shape)
  --on-error stop|skip  stop: a bad record writes nothing (default); skip: write the others
  --resume POSFILE      keep the position in POSFILE; a rerun after an interruption continues there
  --batch-size N        records per write (default 500, at most 1000)
  --user ID             only this mem0 user_id or Graphiti group_id (needed when FILE holds several)
  --scope PROJECT       origin scope of beliefs, project of episodes (default "imported")
  --subject S, --belief-type T, --authority user|affirmed|inferred, --confidence C
                        override the mapping's defaults for every belief
  --session ID          session of transcript messages without one (default: FILE's name)
  --at TIME             time of messages without one (default: FILE's modification time)
  --deadline-ms N       each batch's deadline over gRPC, retries included (default 60000)
  --tenant T, --principal P   the principal (default: RECALL_TENANT_ID, RECALL_PRINCIPAL_ID)

Without --address or --socket it opens the configured store directly (RECALL_DATABASE_URL, or PGlite
in RECALL_DATA_DIR); a PGlite directory a running sidecar holds makes it exit 2: use --address.`,
    run: async (args, config) => (await import("./import.js")).runImport(config, args),
  },
  {
    name: "health",
    summary: "exit 0 when the sidecar answers SERVING",
    help: `usage: recall health
Call grpc.health.v1 Check on RECALL_HOST:RECALL_PORT; exit 0 when the sidecar answers SERVING, 1
otherwise. For container health checks and exec probes.`,
    run: async (args, config) => {
      noArguments(args);
      return (await import("./health.js")).runHealth(config);
    },
  },
  {
    name: "eval",
    summary: "LoCoMo retrieval evaluation; the deterministic benchmark",
    help: `usage: recall eval locomo FILE [options] | recall eval benchmark [options] | recall eval paraphrase [options]
recall eval locomo FILE [--conversations N] [--questions N] [--subjects] [--semantic [semantic options]] [--items N] [--budget N] [--details OUT] [--json]
  LoCoMo retrieval evaluation of FILE (LoCoMo's public JSON format) on a fresh embedded store, beside
  plain BM25. --conversations/--questions take a slice; --subjects passes the speakers a question
  names as subjects; --semantic adds the semantic arm (configured or hashed embedder); its options
  --semantic-fusion convex|rrf, --semantic-normalise min-max|rank, --semantic-weight W (alpha of the
  convex mix, or the RRF weight) and --semantic-cap N override the policy's for the run, and
  --embedding-cache FILE keeps vectors between runs (outside the repository); --items/--budget
  set the caps of the injected block (default 12 / 600); --details writes one JSON line per question.
recall eval benchmark [--fixture FILE] [--baseline FILE] [--record [--accept-regression REASON]] [--json]
  The deterministic benchmark (npm run eval); exits 1 when it differs from the baseline; --record
  re-records it, refusing a triple regression unless --accept-regression says why.
recall eval paraphrase [--fixture FILE] [--json]
  The paraphrase set: probes sharing no content word with what they need, with the semantic arm off
  and on (the configured embedder with RECALL_SEMANTIC=on, else the hashed one).`,
    run: async (args, config) => (await import("./eval.js")).runEval(args, config),
  },
  {
    name: "report",
    summary: "snapshot utilization and misses per session",
    help: `usage: recall report snapshots --tenant T --principal P [--session S]
Snapshot utilization and misses per session, from the traces, as JSON.
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./report.js")).runReport(config, args),
  },
  {
    name: "trace",
    summary: "a persisted trace, or the user view of a turn",
    help: `usage: recall trace TRACE_ID | --view TURN_ID [--surface CEILING|SURFACE_ID] [--ceiling CEILING]
recall trace TRACE_ID        the principal's persisted trace as JSON (GetTrace, operator form)
recall trace --view TURN_ID  the user view of a turn (GetTrace, user form); --surface takes a ceiling
                             (public, personal, confidential, restricted) or a surface id
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./trace.js")).runTrace(config, args),
  },
  {
    name: "delete-session",
    summary: "delete a session's traces, citations and events",
    help: `usage: recall delete-session SESSION_ID --tenant T --principal P
Delete the session's traces, citations and memory.recalled events (as DeleteSessionTraces does).
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./feedback.js")).runDeleteSession(config, args),
  },
  {
    name: "hints",
    summary: "re-derivation hints (subjects missed repeatedly)",
    help: `usage: recall hints [--min-misses N] [--limit N] --tenant T --principal P
Subjects repeatedly queried with nothing rendered (re-derivation hints), as JSON.
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./feedback.js")).runHints(config, args),
  },
  {
    name: "promotions",
    summary: "carried beliefs the model cited",
    help: `usage: recall promotions [--limit N] --tenant T --principal P
Beliefs carried from another project that the model cited (promotion candidates), as JSON.
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./feedback.js")).runPromotions(config, args),
  },
  {
    name: "events",
    summary: "the memory.recalled outbox",
    help: `usage: recall events [--all] [--limit N] --tenant T --principal P
The memory.recalled outbox, unpublished events first (--all: published ones too), as JSON.
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./feedback.js")).runEvents(config, args),
  },
  {
    name: "erase",
    summary: "erase everything stored for a principal (ErasePrincipal)",
    help: `usage: recall erase --tenant T --principal P
Erase everything stored for one principal, in one transaction, as ErasePrincipal does.
${PRINCIPAL_HELP}`,
    run: async (args, config) => (await import("./erase.js")).runErase(config, args),
  },
  {
    name: "sweep",
    summary: "run the retention and uncited-utility sweeps once",
    help: `usage: recall sweep
Run the retention and uncited-utility sweeps once, to completion, on the configured store.`,
    run: async (args, config) => (await import("./feedback.js")).runSweep(config, args),
  },
];

/** Commands that take no arguments refuse any, as a usage error. */
function noArguments(args: readonly string[]): void {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
}

/** The one-line usage of a command. */
export function usageLine(command: Command): string {
  return command.help.split("\n", 1)[0]!;
}

export const OVERVIEW = `usage: recall <command> [options]      (recall <command> --help for its usage)

commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(16)}${c.summary}`).join("\n")}

Configuration is environment variables (RECALL_*), listed in the README.`;

export function findCommand(name: string | undefined): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `--help` or `-h` anywhere before a `--` asks for usage. */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

import { ConfigError, loadConfig, type Config } from "../config/config.js";
import { findCommand, OVERVIEW, usageLine, wantsHelp } from "./commands.js";
import { isUsageError } from "./usage-error.js";
import { StartupError } from "../domain/startup-error.js";
import { DataDirLockedError } from "../store/pglite/data-dir-lock.js";

/**
 * `recall <command>`: usage is answered before anything else happens; what a
 * user got wrong (a usage error, a missing file, a bad value) is one line on
 * stderr, never a stack trace.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? findCommand(args[0]) : undefined;
    process.stdout.write(`${topic ? topic.help : OVERVIEW}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = findCommand(name);
  if (!command) {
    process.stderr.write(`recall: unknown command "${name}" (recall --help lists the commands)\n`);
    return 2;
  }
  if (wantsHelp(args)) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  let config: Config | undefined;
  try {
    config = loadConfig();
    return await command.run(args, config);
  } catch (error) {
    if (isUsageError(error)) {
      process.stderr.write(`recall ${name}: ${(error as Error).message}; ${usageLine(command)}\n`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof DataDirLockedError) {
      process.stderr.write(`recall: ${error.message}\n`);
      return 2;
    }
    if (error instanceof StartupError) {
      process.stderr.write(`recall ${name}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`recall ${name}: ${describe(error, config?.logLevel)}\n`);
    return 1;
  }
}

/** One line for an error: a file the user named, or the message; the stack only at RECALL_LOG_LEVEL debug or trace. */
function describe(error: unknown, logLevel: string | undefined): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as NodeJS.ErrnoException;
  if (e.path && (e.code === "ENOENT" || e.code === "EACCES" || e.code === "EISDIR" || e.code === "ENOTDIR")) {
    return `cannot read ${e.path}: ${FILE_ERRORS[e.code]}`;
  }
  return logLevel === "debug" || logLevel === "trace" ? (error.stack ?? error.message) : error.message;
}

const FILE_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "a part of the path is not a directory",
};

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

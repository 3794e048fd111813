import { readFile, stat } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Config } from "../config/config.js";
import type { Principal } from "../domain/model.js";
import * as validate from "../server/wire/validate.js";
import { checkRecords } from "./import/checked-records.js";
import { FORMATS, mapFile, type Format } from "./import/formats.js";
import { sidecarWriter, storeWriter, type ImportWriter } from "./import/import-writer.js";
import type { MappingOptions, Rejected } from "./import/peer-record.js";
import { fingerprint, readPosition } from "./import/position-file.js";
import { writeBatches } from "./import/write-batches.js";
import { Progress } from "./progress.js";
import { identityHeaders, readToken, sidecarTransport } from "./sidecar-connection.js";
import { PRINCIPAL_OPTIONS } from "./store-command.js";
import { UsageError } from "./usage-error.js";

/**
 * `recall import FILE`: recall's JSON Lines, mem0's get_all() output,
 * Graphiti/Zep entity edges or a chat transcript, mapped to beliefs and
 * episodes (docs/importing.md), checked whole before anything is written,
 * then written in batches, each one transaction: into the configured store
 * directly, or, with --address/--socket, into a running sidecar over gRPC.
 * Bad records are reported by line; --on-error decides whether they stop the
 * run (nothing written) or are skipped. --resume keeps the position so an
 * interrupted run continues where it stopped.
 */

/** Bad records reported by line; the rest are counted. */
export const MAX_REPORTED = 20;
const DEFAULT_BATCH = 500;
const AUTHORITIES = { user: "AUTHORITY_USER", affirmed: "AUTHORITY_AFFIRMED", inferred: "AUTHORITY_INFERRED" } as const;

const OPTIONS = {
  ...PRINCIPAL_OPTIONS,
  address: { type: "string" },
  socket: { type: "string" },
  "token-file": { type: "string" },
  "deadline-ms": { type: "string", default: "60000" },
  format: { type: "string" },
  "on-error": { type: "string", default: "stop" },
  resume: { type: "string" },
  "batch-size": { type: "string", default: String(DEFAULT_BATCH) },
  scope: { type: "string", default: "imported" },
  subject: { type: "string" },
  "belief-type": { type: "string" },
  authority: { type: "string" },
  confidence: { type: "string" },
  user: { type: "string" },
  session: { type: "string" },
  at: { type: "string" },
} as const;

export async function runImport(config: Config, args: string[]): Promise<number> {
  const flags = importFlags(args);
  const text = await readFile(flags.file, "utf8");
  const options = await mappingOptions(flags.values, flags.file);
  const checking = new Progress({ label: "recall import: checking", unit: "records" });
  const { format, mapped } = mapFile(text, options, flags.format);
  if (mapped.owners.size > 1 && options.user === undefined) {
    const some = [...mapped.owners].slice(0, 5).join(", ");
    process.stderr.write(`recall import: ${flags.file} holds the memory of ${mapped.owners.size} users or groups (${some}${mapped.owners.size > 5 ? ", …" : ""}); give --user ID to import one of them into this principal\n`);
    return 2;
  }
  const checked = checkRecords(mapped.records, mapped.rejected, options.now);
  checking.tick(mapped.records.length);
  checking.done();
  report(flags.file, checked.rejected);
  if (checked.rejected.length > 0 && flags.onError === "stop") {
    process.stderr.write(`recall import: ${checked.rejected.length} bad records; nothing was written (--on-error skip writes the others)\n`);
    return 1;
  }
  for (const [reason, n] of mapped.leftOut) process.stderr.write(`recall import: left out ${n} ${reason}\n`);

  const total = checked.episodes.length + checked.beliefs.length;
  const settings = { format, options: { ...options, now: undefined }, principal: flags.principal ?? flags.values["token-file"] };
  const position = flags.values.resume === undefined ? undefined : { path: flags.values.resume, fingerprint: fingerprint(text, settings) };
  const from = position ? await readPosition(position.path, position.fingerprint) : 0;
  if (from > 0) process.stderr.write(`recall import: resuming after ${from} of ${total} records (${position!.path})\n`);
  const writer = flags.remote ? remoteWriter(config, flags.values, flags.principal, flags.deadlineMs) : await storeWriter(config, flags.principal!);
  const run = await untilStopped((stopRequested) => {
    const progress = new Progress({ label: `recall import: writing ${format}`, unit: "records", total });
    return writeBatches(writer, checked, { batchSize: flags.batchSize, from, position, onBatch: (n) => progress.tick(n), stopRequested }).finally(() => progress.done());
  }).finally(() => writer.close());

  const rerun = position ? `; run again with --resume ${position.path} to continue` : "";
  if (run.failure !== undefined) {
    const message = run.failure instanceof Error ? run.failure.message : String(run.failure);
    process.stderr.write(`recall import: ${message}\nrecall import: stopped after ${run.done} of ${total} records${rerun || "; writes are idempotent by id, so running it again is safe (--resume POSFILE also keeps the position)"}\n`);
    return 1;
  }
  if (run.done < total) {
    process.stderr.write(`recall import: interrupted after ${run.done} of ${total} records${rerun}\n`);
    return 130;
  }
  const skipped = checked.rejected.length > 0 ? `; ${checked.rejected.length} bad records skipped` : "";
  const earlier = from > 0 ? ` (the first ${from} records by an earlier run)` : "";
  process.stdout.write(`imported ${checked.beliefs.length} beliefs (${run.written} new or changed) and ${checked.episodes.length} episodes (${run.appended} new) from ${format}${earlier}${skipped}\n`);
  return 0;
}

/** The command line, checked: every usage error before the file is read. */
function importFlags(args: string[]) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("give one FILE");
  const remote = values.address !== undefined || values.socket !== undefined || values["token-file"] !== undefined;
  const principal: Principal | undefined = values.tenant && values.principal ? { tenantId: values.tenant, principalId: values.principal } : undefined;
  if (!principal && !(remote && values["token-file"])) throw new UsageError("--tenant and --principal (or RECALL_TENANT_ID and RECALL_PRINCIPAL_ID) are required");
  const onError = values["on-error"];
  if (onError !== "stop" && onError !== "skip") throw new UsageError("--on-error must be stop or skip");
  const batchSize = positiveInt(values["batch-size"], "--batch-size");
  if (batchSize > validate.MAX_BATCH) throw new UsageError(`--batch-size must be at most ${validate.MAX_BATCH}`);
  const format = values.format;
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);
  return { values, file, remote, principal, onError, batchSize, deadlineMs: positiveInt(values["deadline-ms"], "--deadline-ms"), format: format as Format | undefined };
}

/** Runs `work`, turning SIGINT and SIGTERM into a stop request it honours between batches (a second signal stops at once). */
async function untilStopped<T>(work: (stopRequested: () => boolean) => Promise<T>): Promise<T> {
  let requested = false;
  const onSignal = () => {
    requested = true;
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await work(() => requested);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}

async function mappingOptions(values: { [K in keyof typeof OPTIONS]?: string | undefined }, file: string): Promise<MappingOptions> {
  const authority = values.authority;
  if (authority !== undefined && !Object.hasOwn(AUTHORITIES, authority)) throw new UsageError("--authority must be user, affirmed or inferred");
  const confidence = values.confidence === undefined ? undefined : Number(values.confidence);
  if (confidence !== undefined && !(confidence >= 0 && confidence <= 1)) throw new UsageError("--confidence must be between 0 and 1");
  const at = values.at === undefined ? (await stat(file)).mtime : new Date(values.at);
  if (Number.isNaN(at.getTime())) throw new UsageError("--at must be a time (RFC 3339)");
  return {
    scope: values.scope ?? "imported",
    subject: values.subject,
    beliefType: values["belief-type"],
    authority: authority === undefined ? undefined : AUTHORITIES[authority as keyof typeof AUTHORITIES],
    confidence,
    user: values.user,
    session: values.session ?? basename(resolve(file), extname(file)),
    at,
    now: new Date(),
  };
}

function report(file: string, rejected: readonly Rejected[]): void {
  for (const r of rejected.slice(0, MAX_REPORTED)) process.stderr.write(`recall import: ${file}:${r.line}: ${r.message}\n`);
  if (rejected.length > MAX_REPORTED) process.stderr.write(`recall import: … and ${rejected.length - MAX_REPORTED} more bad records\n`);
}

function remoteWriter(
  config: Config,
  values: { address?: string | undefined; socket?: string | undefined; "token-file"?: string | undefined },
  principal: Principal | undefined,
  deadlineMs: number,
): ImportWriter {
  const { transport, close } = sidecarTransport(config, values);
  const tokenFile = values["token-file"];
  // A token is read again before each batch, so a token file renewed in place during a long import keeps working.
  const headers = async () => identityHeaders(principal?.tenantId, principal?.principalId, tokenFile === undefined ? undefined : await readToken(tokenFile));
  return sidecarWriter(transport, close, headers, deadlineMs);
}

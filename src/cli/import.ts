import { readFile, stat } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Config } from "../config/config.js";
import type { Principal } from "../domain/model.js";
import * as validate from "../server/wire/validate.js";
import { checkRecords, type Checked } from "./import/checked-records.js";
import { FORMATS, mapFile, type Format } from "./import/formats.js";
import { sidecarWriter, storeWriter, type ImportWriter } from "./import/import-writer.js";
import type { MappingOptions, Rejected } from "./import/peer-record.js";
import { fingerprint, readPosition, writePosition } from "./import/position-file.js";
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
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("give one FILE");
  const remote = values.address !== undefined || values.socket !== undefined || values["token-file"] !== undefined;
  const principal = values.tenant && values.principal ? { tenantId: values.tenant, principalId: values.principal } : undefined;
  if (!principal && !(remote && values["token-file"])) throw new UsageError("--tenant and --principal (or RECALL_TENANT_ID and RECALL_PRINCIPAL_ID) are required");
  const onError = values["on-error"];
  if (onError !== "stop" && onError !== "skip") throw new UsageError("--on-error must be stop or skip");
  const batchSize = positiveInt(values["batch-size"], "--batch-size");
  if (batchSize > validate.MAX_BATCH) throw new UsageError(`--batch-size must be at most ${validate.MAX_BATCH}`);
  const deadlineMs = positiveInt(values["deadline-ms"], "--deadline-ms");
  const format = values.format;
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);

  const text = await readFile(file, "utf8");
  const options = await mappingOptions(values, file);
  const checking = new Progress({ label: "recall import: checking", unit: "records" });
  const { format: found, mapped } = mapFile(text, options, format as Format | undefined);
  if (mapped.owners.size > 1 && options.user === undefined) {
    const some = [...mapped.owners].slice(0, 5).join(", ");
    process.stderr.write(`recall import: ${file} holds the memory of ${mapped.owners.size} users or groups (${some}${mapped.owners.size > 5 ? ", …" : ""}); give --user ID to import one of them into this principal\n`);
    return 2;
  }
  const checked = checkRecords(mapped.records, mapped.rejected, options.now);
  checking.tick(mapped.records.length);
  checking.done();
  const total = checked.episodes.length + checked.beliefs.length;
  report(file, checked.rejected);
  if (checked.rejected.length > 0 && onError === "stop") {
    process.stderr.write(`recall import: ${checked.rejected.length} bad records; nothing was written (--on-error skip writes the others)\n`);
    return 1;
  }
  for (const [reason, n] of mapped.leftOut) process.stderr.write(`recall import: left out ${n} ${reason}\n`);

  const settings = { format: found, options: { ...options, now: undefined }, principal: principal ?? values["token-file"] };
  const positionFile = values.resume;
  const from = positionFile ? await readPosition(positionFile, fingerprint(text, settings)) : 0;
  if (from > 0) process.stderr.write(`recall import: resuming after ${from} of ${total} records (${positionFile})\n`);

  const writer = remote ? await remoteWriter(config, values, principal, deadlineMs) : await storeWriter(config, principal!);
  const interrupted = { now: false };
  const onSignal = () => {
    interrupted.now = true;
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const progress = new Progress({ label: `recall import: writing ${found}`, unit: "records", total });
  let done = from;
  const counts = { appended: 0, written: 0 };
  try {
    for (const batch of batches(checked, batchSize, from)) {
      if (interrupted.now) break;
      if (batch.kind === "episodes") counts.appended += await writer.appendEpisodes(batch.items);
      else counts.written += await writer.putBeliefs(batch.items);
      done += batch.items.length;
      progress.tick(batch.items.length);
      if (positionFile) await writePosition(positionFile, { version: 1, fingerprint: fingerprint(text, settings), done, total });
    }
  } catch (error) {
    progress.done();
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`recall import: ${message}\nrecall import: stopped after ${done} of ${total} records${positionFile ? `; run again with --resume ${positionFile} to continue` : "; run again with --resume FILE to keep the position next time (writes are idempotent by id)"}\n`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await writer.close();
  }
  progress.done();
  if (interrupted.now && done < total) {
    process.stderr.write(`recall import: interrupted after ${done} of ${total} records${positionFile ? `; run again with --resume ${positionFile} to continue` : ""}\n`);
    return 130;
  }
  const skipped = checked.rejected.length > 0 ? `; ${checked.rejected.length} bad records skipped` : "";
  process.stdout.write(
    `imported ${checked.beliefs.length} beliefs (${counts.written} new or changed) and ${checked.episodes.length} episodes (${counts.appended} new) from ${found}${from > 0 ? ` (the first ${from} records by an earlier run)` : ""}${skipped}\n`,
  );
  return 0;
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

type Batch = { kind: "episodes"; items: Checked["episodes"] } | { kind: "beliefs"; items: Checked["beliefs"] };

/** Episodes first (beliefs that cite them find their sources), then beliefs; from record `from` on. A batch holds one kind. */
function* batches(checked: Checked, size: number, from: number): Generator<Batch> {
  const episodesFrom = Math.min(from, checked.episodes.length);
  for (let i = episodesFrom; i < checked.episodes.length; i += size) yield { kind: "episodes", items: checked.episodes.slice(i, i + size) };
  for (let i = Math.max(0, from - checked.episodes.length); i < checked.beliefs.length; i += size) yield { kind: "beliefs", items: checked.beliefs.slice(i, i + size) };
}

async function remoteWriter(
  config: Config,
  values: { address?: string | undefined; socket?: string | undefined; "token-file"?: string | undefined },
  principal: Principal | undefined,
  deadlineMs: number,
): Promise<ImportWriter> {
  const { transport, close } = sidecarTransport(config, values);
  const tokenFile = values["token-file"];
  // A token is read again before each batch, so a token file renewed in place during a long import keeps working.
  const headers = async () => identityHeaders(principal?.tenantId, principal?.principalId, tokenFile === undefined ? undefined : await readToken(tokenFile));
  return sidecarWriter(transport, close, headers, deadlineMs);
}

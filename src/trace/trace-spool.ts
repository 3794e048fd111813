import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { ensurePrivateDir, openPrivateFile } from "../store/private-files.js";
import {
  decodeJsonLine,
  decodePayload,
  encodeRecord,
  keyOf,
  parseHeader,
  RECORD_MAGIC,
  type SpoolKey,
  type SpooledRecord,
  type SpooledTrace,
} from "./spool-record.js";

/**
 * A local, durable, bounded spool of traces the database could not take: one
 * append-only file of framed records (`trace-spool.jsonl`, spool-record.ts),
 * oldest first.
 *
 * - `append` resolves once the records are on disk (written and fdatasync'd):
 *   a recall whose trace is spooled answers only after that. Appends arriving
 *   while one is being flushed share the next write and sync (group commit).
 * - The file never grows past `maxBytes`: an append that would is refused.
 * - `read` hands out the oldest unreplayed traces, of any size, one record
 *   in memory at a time; `advance` marks them replayed; `truncateIfDrained`
 *   empties the file once everything in it was replayed and nothing is being
 *   appended. A crash between a replayed batch and the truncation replays
 *   that batch again at the next start, which the store ignores (traces are
 *   written idempotently by id): each trace lands exactly once.
 * - A record that does not decode (damaged, or refused by the store) is
 *   copied to the quarantine file (`trace-spool.quarantine`) and passed
 *   over: it never holds back the ones behind it.
 * - A record torn by a crash mid-append (its append never resolved, so its
 *   recall never answered) is cut off when the spool is opened. A file of the
 *   first format (plain JSON lines) is read as well.
 * - `holds` tells, from the records' keys, whether a principal's trace is
 *   still in the spool: only a read that may look for one waits for it.
 */

export const SPOOL_FILE = "trace-spool.jsonl";
export const QUARANTINE_FILE = "trace-spool.quarantine";

export type { SpooledTrace, SpoolKey } from "./spool-record.js";

export class SpoolFullError extends Error {
  override readonly name = "SpoolFullError";
}

/** A record moved to the quarantine file, for the log and the counters. */
export interface QuarantinedRecord {
  reason: string;
  offset: number;
  bytes: number;
  traceId: string | undefined;
  /** False when the quarantine file had no room: the record's bytes are gone. */
  kept: boolean;
}

export interface TraceSpoolOptions {
  /** The setting that names the folder, for a startup error. */
  setting?: string;
}

/** What one read step found at an offset. */
type Found =
  | { kind: "record"; record: SpooledRecord; key: SpoolKey; end: number; bytes: number }
  | { kind: "bad"; reason: string; key?: SpoolKey; end: number };

/** Bytes read at a time when looking for a line's end. */
const SCAN_CHUNK = 64 * 1024;
/** A header line is short (ids and names); one longer than this is damage. */
const MAX_HEADER = 64 * 1024;
/** A replayed batch stops after this many payload bytes (at least one trace). */
const BATCH_BYTES = 8 * 1024 * 1024;
const NEWLINE = 10;

export class TraceSpool {
  /** Bytes in the file. */
  private size = 0;
  /** Bytes accepted by append but not yet in the file. */
  private pendingBytes = 0;
  /** Bytes of the file already replayed (or passed over). */
  private replayed = 0;
  /** Bytes before this offset were already checked for quarantine: a re-read copies nothing twice. */
  private quarantinedTo = 0;
  private readonly waiting: { data: Buffer; keys: SpoolKey[]; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** A truncation in progress: appends wait for it (one landing mid-truncation was lost). */
  private truncating: Promise<void> | undefined;
  /** Traces on disk and not yet replayed, by id: what `holds` answers from. */
  private readonly held = new Map<string, SpoolKey>();
  /** The traces of the last read, with where each ends: `advance` lets go of those it passes. */
  private lastRead: { id: string; at: number; end: number }[] = [];
  private readonly heldChanged = new Set<() => void>();
  private quarantine: FileHandle | undefined;
  /** Called for every record moved to quarantine (the outage spool logs and counts it). */
  onQuarantine: ((record: QuarantinedRecord) => void) | undefined;

  private constructor(
    private readonly file: FileHandle,
    readonly path: string,
    readonly quarantinePath: string,
    readonly maxBytes: number,
  ) {}

  /** Opens (or creates) the spool in `dir`, 0600 in a 0700 folder; indexes it and cuts off a torn last record. */
  static async open(dir: string, maxBytes: number, options: TraceSpoolOptions = {}): Promise<TraceSpool> {
    await ensurePrivateDir(dir, "the trace spool folder", options.setting ?? "RECALL_TRACE_SPOOL_DIR");
    const path = join(dir, SPOOL_FILE);
    const file = await openPrivateFile(path, "a+");
    const spool = new TraceSpool(file, path, join(dir, QUARANTINE_FILE), maxBytes);
    spool.size = (await file.stat()).size;
    await spool.scan();
    return spool;
  }

  /** Bytes spooled and not yet replayed (including appends in progress). */
  get backlogBytes(): number {
    return this.size + this.pendingBytes - this.replayed;
  }

  get isEmpty(): boolean {
    return this.backlogBytes === 0;
  }

  /** Traces on disk and not yet replayed. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Room for at least one more trace of `bytes` (a compacted trace is a few KiB). */
  hasRoom(bytes = 64 * 1024): boolean {
    return this.size + this.pendingBytes + bytes <= this.maxBytes;
  }

  /** True when a trace on disk and not yet replayed matches. */
  holds(match: (key: SpoolKey) => boolean): boolean {
    for (const key of this.held.values()) if (match(key)) return true;
    return false;
  }

  /** Resolves once no trace the spool holds matches (replayed, or quarantined). */
  whenGone(match: (key: SpoolKey) => boolean): Promise<void> {
    if (!this.holds(match)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.holds(match)) return;
        this.heldChanged.delete(check);
        resolve();
      };
      this.heldChanged.add(check);
    });
  }

  /** Appends the traces, oldest first; resolves once they are on disk. Throws SpoolFullError when they do not fit. */
  append(items: readonly SpooledTrace[]): Promise<void> {
    const data = Buffer.concat(items.map((item) => encodeRecord(item)));
    if (this.size + this.pendingBytes + data.length > this.maxBytes) {
      return Promise.reject(new SpoolFullError(`trace spool full (${this.maxBytes} bytes)`));
    }
    this.pendingBytes += data.length;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ data, keys: items.map(keyOf), resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /**
   * Up to `max` of the oldest unreplayed traces (their ranked lists possibly
   * still compact), and the offset that follows them (for `advance`).
   * Records that do not decode go to quarantine on the way.
   */
  async read(max: number): Promise<{ items: SpooledRecord[]; next: number }> {
    const items: SpooledRecord[] = [];
    this.lastRead = [];
    let at = this.replayed;
    let bytes = 0;
    while (items.length < max && bytes < BATCH_BYTES && at < this.size) {
      const found = await this.recordAt(at);
      if (found.kind === "record") {
        items.push(found.record);
        this.lastRead.push({ id: found.key.id, at, end: found.end });
        bytes += found.bytes;
      } else {
        await this.toQuarantine(at, found.end, found.reason, found.key);
        // Nothing before it waits for the store: passed over at once.
        if (items.length === 0) this.replayed = found.end;
      }
      at = found.end;
    }
    return { items, next: at };
  }

  /** Marks everything before `offset` (from `read`) as replayed. */
  advance(offset: number): void {
    this.replayed = Math.max(this.replayed, Math.min(offset, this.size));
    for (const r of this.lastRead) if (r.end <= this.replayed) this.held.delete(r.id);
    this.lastRead = this.lastRead.filter((r) => r.end > this.replayed);
    this.notifyHeld();
  }

  /** The store refuses the first trace of the last read for good: it goes to quarantine, the replay goes on after it. */
  async quarantineFirst(reason: string): Promise<void> {
    const first = this.lastRead[0];
    if (!first || first.at !== this.replayed) return;
    const key = this.held.get(first.id);
    await this.toQuarantine(first.at, first.end, reason, key, true);
    this.lastRead = [];
    this.replayed = first.end;
  }

  /** Empties the file when everything in it was replayed and no append is in progress; true when it is empty. */
  async truncateIfDrained(): Promise<boolean> {
    if (this.backlogBytes > 0 || this.flushing || this.truncating) return false;
    if (this.size === 0) return true;
    this.truncating = (async () => {
      await this.file.truncate(0);
      await this.file.datasync();
      this.size = 0;
      this.replayed = 0;
      this.quarantinedTo = 0;
      this.lastRead = [];
      this.held.clear();
    })();
    try {
      await this.truncating;
    } finally {
      this.truncating = undefined;
    }
    this.notifyHeld();
    // Appends that arrived meanwhile waited, and are not replayed yet.
    return this.backlogBytes === 0;
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.file.close();
    await this.quarantine?.close();
  }

  /** Writes and syncs everything waiting, in groups, until nothing waits. */
  private async flush(): Promise<void> {
    if (this.truncating) await this.truncating.catch(() => {});
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0);
      const data = group.length === 1 ? group[0]!.data : Buffer.concat(group.map((g) => g.data));
      try {
        // "a+": every write goes to the end of the file, whatever the position.
        let written = 0;
        while (written < data.length) written += (await this.file.write(data, written, data.length - written)).bytesWritten;
        await this.file.datasync();
        this.size += data.length;
        this.pendingBytes -= data.length;
        for (const g of group) for (const key of g.keys) this.held.set(key.id, key);
        for (const g of group) g.resolve();
      } catch (error) {
        this.pendingBytes -= data.length;
        // What did reach the file is not counted: the next open cuts a torn record, and the size is read again then.
        this.size = (await this.file.stat().catch(() => ({ size: this.size }))).size;
        for (const g of group) g.reject(error);
      }
    }
    this.flushing = undefined;
  }

  /** The record at `at`: decoded, or why not and where the next one may begin. */
  private async recordAt(at: number): Promise<Found> {
    const first = await this.bytesAt(at, 1);
    if (first[0] === RECORD_MAGIC.charCodeAt(0)) {
      const headerEnd = await this.lineEnd(at, MAX_HEADER);
      if (headerEnd === -1) return { kind: "bad", reason: "a header without its end", end: await this.nextLine(at + MAX_HEADER) };
      const header = parseHeader(await this.bytesAt(at, headerEnd - at));
      if (!header) return { kind: "bad", reason: "an unreadable header", end: await this.afterPayloadLine(headerEnd + 1) };
      const payloadAt = headerEnd + 1;
      const end = payloadAt + header.payloadBytes + 1;
      if (end > this.size || (await this.bytesAt(end - 1, 1))[0] !== NEWLINE) {
        return { kind: "bad", reason: "a length that does not match", key: header.key, end: await this.afterPayloadLine(payloadAt) };
      }
      try {
        const record = decodePayload(header, await this.bytesAt(payloadAt, header.payloadBytes));
        return { kind: "record", record, key: header.key, end, bytes: header.payloadBytes };
      } catch (error) {
        return { kind: "bad", reason: (error as Error).message, key: header.key, end };
      }
    }
    const end = await this.nextLine(at);
    if (first[0] !== "{".charCodeAt(0)) return { kind: "bad", reason: "not a record", end };
    // A line of the first format: one JSON trace.
    try {
      const record = decodeJsonLine((await this.bytesAt(at, end - at - 1)).toString("utf8"));
      return { kind: "record", record, key: keyOf(record as SpooledTrace), end, bytes: end - at };
    } catch (error) {
      return { kind: "bad", reason: `an unreadable line (${(error as Error).message})`, end };
    }
  }

  /**
   * Walks the file at open, reading headers only: indexes the traces it holds
   * and cuts a record torn by a crash (its recall never answered).
   */
  private async scan(): Promise<void> {
    let at = 0;
    while (at < this.size) {
      const first = (await this.bytesAt(at, 1))[0];
      const lineEnd = await this.lineEnd(at, first === RECORD_MAGIC.charCodeAt(0) ? MAX_HEADER : Infinity);
      if (lineEnd === -1 && (await this.lineEnd(at, Infinity)) === -1) return this.cutAt(at);
      if (first === RECORD_MAGIC.charCodeAt(0)) {
        const header = lineEnd === -1 ? null : parseHeader(await this.bytesAt(at, lineEnd - at));
        if (header) {
          const end = lineEnd + 1 + header.payloadBytes + 1;
          // Its payload never reached the end: torn, when nothing follows it.
          if (end > this.size && (await this.lineEnd(lineEnd + 1, Infinity)) === -1) return this.cutAt(at);
          if (end <= this.size && (await this.bytesAt(end - 1, 1))[0] === NEWLINE) {
            this.held.set(header.key.id, header.key);
            at = end;
            continue;
          }
        }
        // Damage: read() quarantines it (with its payload line); the walk goes on after them.
        at = lineEnd === -1 ? await this.nextLine(at) : await this.afterPayloadLine(lineEnd + 1);
        continue;
      }
      if (first === "{".charCodeAt(0)) {
        try {
          const key = keyOf(decodeJsonLine((await this.bytesAt(at, lineEnd - at)).toString("utf8")) as SpooledTrace);
          this.held.set(key.id, key);
        } catch {
          // read() quarantines it.
        }
      }
      at = lineEnd + 1;
    }
  }

  private async cutAt(offset: number): Promise<void> {
    await this.file.truncate(offset);
    await this.file.datasync();
    this.size = offset;
  }

  /** Copies the bytes [at, end) to the quarantine file (once), and lets go of their trace. */
  private async toQuarantine(at: number, end: number, reason: string, key: SpoolKey | undefined, again = false): Promise<void> {
    if (key) {
      this.held.delete(key.id);
      this.notifyHeld();
    }
    if (at < this.quarantinedTo && !again) return;
    this.quarantinedTo = Math.max(this.quarantinedTo, end);
    const bytes = end - at;
    let kept = false;
    this.quarantine ??= await openPrivateFile(this.quarantinePath, "a");
    // Bounded like the spool: past its cap a record is only logged.
    if ((await this.quarantine.stat()).size + bytes <= this.maxBytes) {
      const label = `# quarantined ${new Date().toISOString()} offset=${at} bytes=${bytes} trace=${key?.id ?? "?"} reason=${JSON.stringify(reason)}\n`;
      await this.quarantine.write(label);
      for (let from = at; from < end; from += SCAN_CHUNK) await this.quarantine.write(await this.bytesAt(from, Math.min(SCAN_CHUNK, end - from)));
      if ((await this.bytesAt(end - 1, 1))[0] !== NEWLINE) await this.quarantine.write("\n");
      await this.quarantine.datasync();
      kept = true;
    }
    this.onQuarantine?.({ reason, offset: at, bytes, traceId: key?.id, kept });
  }

  /** The offset of the first newline at or after `from`, looking at most `limit` bytes; -1 when there is none. */
  private async lineEnd(from: number, limit: number): Promise<number> {
    const stop = Math.min(this.size, from + limit);
    for (let at = from; at < stop; at += SCAN_CHUNK) {
      const chunk = await this.bytesAt(at, Math.min(SCAN_CHUNK, stop - at));
      const nl = chunk.indexOf(NEWLINE);
      if (nl !== -1) return at + nl;
    }
    return -1;
  }

  /** Where the line holding `from` ends (after its newline), or the end of the file. */
  private async nextLine(from: number): Promise<number> {
    const nl = await this.lineEnd(from, Infinity);
    return nl === -1 ? this.size : nl + 1;
  }

  /** After a damaged header: its payload line goes with it, unless the next line is a record's header. */
  private async afterPayloadLine(at: number): Promise<number> {
    if (at >= this.size) return this.size;
    const first = (await this.bytesAt(at, RECORD_MAGIC.length)).toString("utf8");
    return first === RECORD_MAGIC ? at : this.nextLine(at);
  }

  private async bytesAt(at: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, this.size - at)));
    let read = 0;
    while (read < buffer.length) {
      const { bytesRead } = await this.file.read(buffer, read, buffer.length - read, at + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  }

  private notifyHeld(): void {
    for (const check of [...this.heldChanged]) check();
  }
}

import { mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { Principal, RecallTrace } from "../domain/model.js";

/**
 * A local, durable, bounded spool of traces the database could not take: one
 * append-only file of JSON lines (`trace-spool.jsonl`), oldest first.
 *
 * - `append` resolves once the lines are on disk (written and fdatasync'd):
 *   a recall whose trace is spooled answers only after that. Appends arriving
 *   while one is being flushed share the next write and sync (group commit).
 * - The file never grows past `maxBytes`: an append that would is refused.
 * - `read` hands out the oldest unreplayed lines; `advance` marks them
 *   replayed; `truncateIfDrained` empties the file once everything in it was
 *   replayed and nothing is being appended. A crash between a replayed batch
 *   and the truncation replays that batch again at the next start, which the
 *   store ignores (traces are written idempotently by id): each trace lands
 *   exactly once.
 * - A line torn by a crash mid-append (its append never resolved, so its
 *   recall never answered) is cut off when the spool is opened.
 */

export const SPOOL_FILE = "trace-spool.jsonl";

export interface SpooledTrace {
  principal: Principal;
  trace: RecallTrace;
}

export class SpoolFullError extends Error {
  override readonly name = "SpoolFullError";
}

/** The most bytes one read takes from the file: a batch of traces, never the whole spool. */
const READ_CHUNK = 1024 * 1024;

export class TraceSpool {
  /** Bytes in the file. */
  private size = 0;
  /** Bytes accepted by append but not yet in the file. */
  private pendingBytes = 0;
  /** Bytes of the file already replayed. */
  private replayed = 0;
  private readonly waiting: { data: Buffer; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** A truncation in progress: appends wait for it (one landing mid-truncation was lost). */
  private truncating: Promise<void> | undefined;

  private constructor(
    private readonly file: FileHandle,
    readonly path: string,
    readonly maxBytes: number,
  ) {}

  /** Opens (or creates) the spool in `dir`, cutting off a torn last line. */
  static async open(dir: string, maxBytes: number): Promise<TraceSpool> {
    await mkdir(dir, { recursive: true });
    const path = join(dir, SPOOL_FILE);
    const file = await open(path, "a+");
    const spool = new TraceSpool(file, path, maxBytes);
    spool.size = (await file.stat()).size;
    await spool.cutTornTail();
    return spool;
  }

  /** Bytes spooled and not yet replayed (including appends in progress). */
  get backlogBytes(): number {
    return this.size + this.pendingBytes - this.replayed;
  }

  get isEmpty(): boolean {
    return this.backlogBytes === 0;
  }

  /** Room for at least one more trace of `bytes` (a typical trace is a few KiB). */
  hasRoom(bytes = 64 * 1024): boolean {
    return this.size + this.pendingBytes + bytes <= this.maxBytes;
  }

  /** Appends the traces, oldest first; resolves once they are on disk. Throws SpoolFullError when they do not fit. */
  append(items: readonly SpooledTrace[]): Promise<void> {
    const data = Buffer.from(items.map((item) => encodeLine(item)).join(""), "utf8");
    if (this.size + this.pendingBytes + data.length > this.maxBytes) {
      return Promise.reject(new SpoolFullError(`trace spool full (${this.maxBytes} bytes)`));
    }
    this.pendingBytes += data.length;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ data, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** Up to `max` of the oldest unreplayed traces, and the offset that follows them (for `advance`). */
  async read(max: number): Promise<{ items: SpooledTrace[]; next: number }> {
    const items: SpooledTrace[] = [];
    let at = this.replayed;
    while (items.length < max && at < this.size) {
      const length = Math.min(READ_CHUNK, this.size - at);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await this.file.read(buffer, 0, length, at);
      const text = buffer.subarray(0, bytesRead);
      let start = 0;
      for (let nl = text.indexOf(10); nl !== -1 && items.length < max; nl = text.indexOf(10, start)) {
        items.push(decodeLine(text.subarray(start, nl).toString("utf8")));
        start = nl + 1;
      }
      // A line longer than a chunk cannot be: traces are far smaller. Stop rather than spin.
      if (start === 0) break;
      at += start;
    }
    return { items, next: at };
  }

  /** Marks everything before `offset` (from `read`) as replayed. */
  advance(offset: number): void {
    this.replayed = Math.max(this.replayed, Math.min(offset, this.size));
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
    })();
    try {
      await this.truncating;
    } finally {
      this.truncating = undefined;
    }
    // Appends that arrived meanwhile waited, and are not replayed yet.
    return this.backlogBytes === 0;
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.file.close();
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
        for (const g of group) g.resolve();
      } catch (error) {
        this.pendingBytes -= data.length;
        // What did reach the file is not counted: the next open cuts a torn line, and the size is read again then.
        this.size = (await this.file.stat().catch(() => ({ size: this.size }))).size;
        for (const g of group) g.reject(error);
      }
    }
    this.flushing = undefined;
  }

  private async cutTornTail(): Promise<void> {
    if (this.size === 0) return;
    const tail = Buffer.alloc(Math.min(this.size, READ_CHUNK));
    await this.file.read(tail, 0, tail.length, this.size - tail.length);
    const lastNewline = tail.lastIndexOf(10);
    const keep = lastNewline === -1 ? this.size - tail.length : this.size - tail.length + lastNewline + 1;
    if (keep === this.size) return;
    await this.file.truncate(keep);
    await this.file.datasync();
    this.size = keep;
  }
}

/** One JSON line; Dates as {"$date": ISO} so they come back as Dates. */
export function encodeLine(item: SpooledTrace): string {
  return (
    JSON.stringify(item, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      return raw instanceof Date ? { $date: raw.toISOString() } : value;
    }) + "\n"
  );
}

export function decodeLine(line: string): SpooledTrace {
  return JSON.parse(line, (_key, value: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const keys = Object.keys(value);
      if (keys.length === 1 && keys[0] === "$date") return new Date((value as { $date: string }).$date);
    }
    return value;
  }) as SpooledTrace;
}

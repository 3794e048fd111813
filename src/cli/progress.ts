/**
 * Progress of long work on stderr: count, rate and, when the total is known,
 * an ETA. On a terminal one line is redrawn in place (at most every 100 ms);
 * otherwise (a log file, CI) a full line is written every few seconds, so a
 * long import is never silent and a short one adds nothing.
 */

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressOptions {
  /** What is being done, e.g. "validating". */
  label: string;
  /** What is counted, e.g. "lines". */
  unit: string;
  total?: number;
  /** Default: process.stderr. */
  stream?: ProgressStream;
  /** Milliseconds between lines when the stream is not a terminal. Default 5000. */
  intervalMs?: number;
  /** Milliseconds clock; default performance.now. */
  now?: () => number;
}

const TTY_REDRAW_MS = 100;
const DEFAULT_INTERVAL_MS = 5000;

export class Progress {
  private count = 0;
  private readonly startedAt: number;
  private lastWriteAt: number;
  private drawn = false;
  private readonly stream: ProgressStream;
  private readonly now: () => number;
  private readonly everyMs: number;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
    this.lastWriteAt = this.startedAt;
    this.everyMs = this.stream.isTTY ? TTY_REDRAW_MS : (options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }

  /** Counts `n` more units done; writes a line when it is time. */
  tick(n = 1): void {
    this.count += n;
    const at = this.now();
    if (at - this.lastWriteAt < this.everyMs) return;
    this.lastWriteAt = at;
    this.write(this.line(at));
  }

  /** Ends the progress: a terminal's line is finished with its final count; elsewhere nothing more is written. */
  done(): void {
    if (this.stream.isTTY && this.drawn) this.stream.write(`\r\x1b[K${this.line(this.now())}\n`);
    this.drawn = false;
  }

  /** "validating: 12,000 / 50,000 lines (4,100 lines/s, ETA 9 s)". */
  line(at: number): string {
    const seconds = Math.max(0.001, (at - this.startedAt) / 1000);
    const rate = this.count / seconds;
    const { label, unit, total } = this.options;
    const of = total === undefined ? "" : ` / ${fmt(total)}`;
    const eta = total === undefined || rate === 0 ? "" : `, ETA ${duration(Math.max(0, total - this.count) / rate)}`;
    return `${label}: ${fmt(this.count)}${of} ${unit} (${fmt(Math.round(rate))} ${unit}/s${eta})`;
  }

  private write(line: string): void {
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[K${line}`);
      this.drawn = true;
    } else {
      this.stream.write(`${line}\n`);
    }
  }
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

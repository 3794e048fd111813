import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The RPCs /mcp runs for the requests of one connection, counted against
 * RECALL_MAX_CONCURRENT_STREAMS as that connection's streams would be: one
 * POST may carry a JSON-RPC batch of up to 100 tool calls, each an RPC
 * through the router, and none of them is an HTTP/2 stream. At most `size`
 * run at once; the others wait their turn in order, each within its own
 * deadline (its signal), as a gRPC client queues calls beyond the limit.
 */
export class CallSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Resolves with the slot's release (call it once, or let the signal's abort do it) when a slot is free. */
  async acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
    if (this.free > 0) {
      this.free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const granted = () => {
          signal.removeEventListener("abort", gaveUp);
          resolve();
        };
        const gaveUp = () => {
          this.waiting.splice(this.waiting.indexOf(granted), 1);
          reject(ConnectError.from(signal.reason, Code.Canceled));
        };
        this.waiting.push(granted);
        signal.addEventListener("abort", gaveUp, { once: true });
      });
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      signal.removeEventListener("abort", release);
      const next = this.waiting.shift();
      // The slot passes straight to the next in line.
      if (next) next();
      else this.free++;
    };
    // connect ends every call by aborting its signal, answered or failed: the slot cannot leak.
    signal.addEventListener("abort", release, { once: true });
    return release;
  }
}

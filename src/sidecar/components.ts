/**
 * The parts of a running sidecar that hold something to release (a store,
 * a listener, a timer, a LISTEN connection), started in order and stopped
 * in reverse: a part stops before everything it was started on. A start-up
 * that fails part-way stops what it had started, so nothing stays
 * half-started.
 */

export interface StopOptions {
  /** When the shutdown's grace period ends (epoch ms). */
  deadlineAt: number;
  /** Start-up failed: release at once, wait for nothing (no flush, no grace). */
  aborted: boolean;
}

interface Started {
  readonly name: string;
  stop(how: StopOptions): Promise<void>;
}

export class Components {
  private readonly started: Started[] = [];

  /** Runs `start` and keeps `stop` (given what start returned) to run before every part started earlier. */
  async start<T>(name: string, start: () => Promise<T> | T, stop: (value: T, how: StopOptions) => unknown): Promise<T> {
    const value = await start();
    this.started.push({
      name,
      stop: async (how) => {
        await stop(value, how);
      },
    });
    return value;
  }

  /** Stops every part started, the last first; each at most once. */
  async stopAll(how: StopOptions): Promise<void> {
    for (const part of this.started.splice(0).reverse()) await part.stop(how);
  }
}

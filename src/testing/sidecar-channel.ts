import { createInterface } from "node:readline";

/**
 * The control channel between a testing sidecar and the test process that
 * started it: JSON messages both ways (testing/sidecar-child-run.ts lists
 * them). A Node parent forks the child and talks over its IPC channel; any
 * other language (recall_client.testing, in Python) starts `recall
 * test-sidecar` and talks JSON lines over its stdin and stdout. Either way
 * the channel closing means the parent went away, and the sidecar stops.
 */
export interface SidecarChannel {
  send(message: object): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the parent closes its end (or exits). */
  onClose(listener: () => void): void;
  /** Lets go of the channel, so that a sidecar that failed to start can exit. */
  close(): void;
}

/** Node's IPC channel of a forked child. */
export const ipcChannel: SidecarChannel = {
  send: (message) => void process.send?.(message),
  onMessage: (listener) => void process.on("message", listener),
  onClose: (listener) => void process.on("disconnect", listener),
  close: () => process.disconnect?.(),
};

/** JSON lines on stdin (from the parent) and stdout (to it); a line that is not JSON is ignored. */
export function stdioChannel(): SidecarChannel {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  return {
    send: (message) => void process.stdout.write(`${JSON.stringify(message)}\n`),
    onMessage: (listener) =>
      void lines.on("line", (line) => {
        if (line.trim() === "") return;
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        listener(message);
      }),
    onClose: (listener) => void lines.once("close", listener),
    close: () => {
      lines.close();
      process.stdin.destroy();
    },
  };
}

/** The first message on a channel, listened for at once (one that arrived while the sidecar was being imported must not be lost). */
export function firstMessageOf(channel: SidecarChannel): Promise<unknown> {
  return new Promise((resolve) => {
    let first = true;
    channel.onMessage((message) => {
      if (first) resolve(message);
      first = false;
    });
  });
}

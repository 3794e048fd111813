import { loadConfig } from "../config/config.js";
import { createLogger } from "../log/logger.js";
import { startSidecar } from "../sidecar/start-sidecar.js";
import { keepServingThroughDriverRejections } from "../store/postgres/driver-rejections.js";
import { eraseEveryPrincipal } from "./reset-store.js";
import { parseFixtures, writeFixtures, type Fixture } from "./fixtures.js";
import type { SidecarChannel } from "./sidecar-channel.js";

/**
 * The process behind startLocalSidecar (forked with an IPC channel) and
 * `recall test-sidecar` (JSON lines on stdin and stdout): a real sidecar,
 * configured by the RECALL_* environment the parent set, plus a control
 * channel a production sidecar does not have: "reset" erases every principal
 * and writes the fixtures again. Messages:
 *   parent → child  { type: "fixtures", fixtures } (once, first), { type: "reset", id }, { type: "stop" }
 *   child → parent  { type: "ready", port }, { type: "reset-done", id } | { type: "reset-failed", id, message },
 *                   { type: "failed", message }
 */

type Inbound = { type: "fixtures"; fixtures: Fixture[] } | { type: "reset"; id: number } | { type: "stop" };

/**
 * Runs the child; `firstMessage` is the parent's first message, listened for by the entry point
 * (sidecar-child.ts, cli/test-sidecar.ts) before it imported this. Resolves false when the sidecar
 * did not start (the parent was sent "failed").
 */
export async function runSidecarChild(channel: SidecarChannel, firstMessage: Promise<unknown>): Promise<boolean> {
  const send = (message: object) => channel.send(message);
  const first = (await firstMessage) as Inbound;
  try {
    if (first.type !== "fixtures") throw new Error(`expected the fixtures first, got "${first.type}"`);
    const config = loadConfig();
    const fixtures = await parseFixtures(first.fixtures, new Date());
    const logger = createLogger(config.logLevel);
    keepServingThroughDriverRejections(logger);
    const sidecar = await startSidecar(config, logger);
    await writeFixtures(sidecar.store, fixtures);

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= sidecar.stop().finally(() => process.exit(0));
      return stopping;
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    // The test process went away (crashed, killed, or forgot stop()): no orphan sidecar.
    channel.onClose(() => void stop());
    channel.onMessage((message) => {
      const m = message as Inbound;
      if (m.type === "stop") void stop();
      if (m.type !== "reset") return;
      eraseEveryPrincipal(sidecar.store.db)
        .then(() => writeFixtures(sidecar.store, fixtures))
        .then(
          () => send({ type: "reset-done", id: m.id }),
          (error: unknown) => send({ type: "reset-failed", id: m.id, message: error instanceof Error ? error.message : String(error) }),
        );
    });
    send({ type: "ready", port: sidecar.port });
    return true;
  } catch (error) {
    send({ type: "failed", message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
    channel.close();
    return false;
  }
}

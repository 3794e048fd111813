import { firstMessageOf, stdioChannel } from "../testing/sidecar-channel.js";

/**
 * `recall test-sidecar`: the testing sidecar of src/testing for a test
 * process in another language (recall_client.testing, in Python). It is
 * controlled with JSON lines: fixtures, reset and stop on stdin; ready,
 * reset-done and failed on stdout; its log goes to stderr. Closing stdin
 * stops it.
 */
export async function runTestSidecar(): Promise<number> {
  const channel = stdioChannel();
  const first = firstMessageOf(channel);
  try {
    const { runSidecarChild } = await import("../testing/sidecar-child-run.js");
    return (await runSidecarChild(channel, first)) ? 0 : 1;
  } catch (error) {
    // A broken install (a module that does not load): say so and let go of stdin, or the open
    // channel would keep the process, and the test waiting for it, alive until a timeout.
    channel.send({ type: "failed", message: error instanceof Error ? error.message : String(error) });
    channel.close();
    throw error;
  }
}

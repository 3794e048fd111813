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
  const { runSidecarChild } = await import("../testing/sidecar-child-run.js");
  return (await runSidecarChild(channel, first)) ? 0 : 1;
}

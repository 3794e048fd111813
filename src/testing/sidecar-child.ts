import { limitHeapGrowth } from "../sidecar/heap-growth.js";
import { prestartEphemeralStore } from "../store/ephemeral-start.js";
import { firstMessageOf, ipcChannel } from "./sidecar-channel.js";

/**
 * The process behind startLocalSidecar (testing/sidecar-child-run.ts). As
 * `recall serve` does, it starts an ephemeral store's worker thread before it
 * imports the sidecar, and before the fixtures arrive (docs/adr/0007). The
 * parent's first message is listened for at once: one that arrived while the
 * rest was being imported would be lost.
 */
const firstMessage = firstMessageOf(ipcChannel);
limitHeapGrowth();
prestartEphemeralStore(process.env, []);
const { runSidecarChild } = await import("./sidecar-child-run.js");
await runSidecarChild(ipcChannel, firstMessage);

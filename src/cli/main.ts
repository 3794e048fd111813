#!/usr/bin/env node
import { limitHeapGrowth } from "../sidecar/heap-growth.js";
import { prestartEphemeralStore } from "../store/ephemeral-start.js";

/**
 * `recall`: the package's bin. An ephemeral `recall serve` starts its store's
 * worker thread first, before the rest of the CLI is imported, so that
 * PGlite starts while the sidecar's modules load (docs/adr/0007); everything
 * else is cli/run.ts.
 */
limitHeapGrowth();
const [command, ...args] = process.argv.slice(2);
// The same for `recall test-sidecar`, whose store the environment names.
if ((command === "serve" || command === "test-sidecar") && !args.includes("--help") && !args.includes("-h")) prestartEphemeralStore(process.env, args);
await import("./run.js");

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/testing/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Each file gets its own process: PGlite instances and sidecar processes never share state.
    pool: "forks",
    // Two cores: more workers only make PGlite and the sidecar processes fight for them.
    maxWorkers: 2,
    // Generous: several tests start two sidecar processes on PGlite; on 2 busy cores that takes tens of seconds.
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});

#!/usr/bin/env node
// Whether dist/ is a complete build of the sources as they are now, so `npm run demo` builds
// only when it must (a build takes 15-70 s).
//
//   node scripts/build-stamp.mjs begin     first step of `npm run build`: dist/.build-started, now
//   node scripts/build-stamp.mjs end       last step: renamed to dist/.build-complete (same mtime)
//   node scripts/build-stamp.mjs current   exit 0 when dist/.build-complete is newer than every
//                                          input file, 1 when a build is needed
//
// The stamp carries the time the build BEGAN: a source saved while it ran is newer than the stamp,
// so the next check builds again. A build that failed leaves no .build-complete (its .build-started
// is never renamed). Inputs: what the build reads (src, proto, sql, the package and lock files,
// the tsconfigs). RECALL_BUILD_ROOT (tests) names another package root.
import { closeSync, openSync, readdirSync, renameSync, rmSync, statSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = process.env.RECALL_BUILD_ROOT ?? fileURLToPath(new URL("..", import.meta.url));
const STARTED = join(root, "dist", ".build-started");
const COMPLETE = join(root, "dist", ".build-complete");
const INPUTS = ["src", "proto", "sql", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.ui.json"];

/** The newest modification time of the files under `path` (a file or a folder), 0 when it is absent. */
function newest(path) {
  let info;
  try {
    info = statSync(path);
  } catch (error) {
    if (error.code === "ENOENT") return 0;
    throw error;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = info.mtimeMs; // a file deleted from the folder changes the folder's own time
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

const command = process.argv[2];
if (command === "begin") {
  mkdirSync(join(root, "dist"), { recursive: true });
  rmSync(COMPLETE, { force: true });
  closeSync(openSync(STARTED, "w"));
} else if (command === "end") {
  renameSync(STARTED, COMPLETE);
} else if (command === "current") {
  let built;
  try {
    built = statSync(COMPLETE).mtimeMs;
  } catch {
    process.exit(1);
  }
  const changed = Math.max(...INPUTS.map((input) => newest(join(root, input))));
  if (changed >= built) process.exit(1);
  process.stdout.write("dist/ is current: not rebuilt\n");
} else {
  process.stderr.write("usage: node scripts/build-stamp.mjs begin|end|current\n");
  process.exit(2);
}

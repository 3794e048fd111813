import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

/** scripts/build-stamp.mjs: `npm run demo` builds only when dist/ is not a complete build of the sources as they are. */
const SCRIPT = fileURLToPath(new URL("../../scripts/build-stamp.mjs", import.meta.url));

describe("the build stamp (npm run demo's rebuild check)", () => {
  let root = "";
  const stamp = (command: string) => spawnSync(process.execPath, [SCRIPT, command], { env: { ...process.env, RECALL_BUILD_ROOT: root }, encoding: "utf8" }).status;
  const age = (path: string, secondsAgo: number) => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(root, path), at, at);
  };
  const fakePackage = () => {
    if (root !== "") rmSync(root, { recursive: true, force: true });
    root = mkdtempSync(join(tmpdir(), "recall-build-stamp-"));
    mkdirSync(join(root, "src", "cli"), { recursive: true });
    mkdirSync(join(root, "sql"));
    writeFileSync(join(root, "src", "cli", "main.ts"), "export {};\n");
    writeFileSync(join(root, "sql", "0001_initial.sql"), "SELECT 1;\n");
    writeFileSync(join(root, "package.json"), "{}\n");
    for (const path of ["src/cli/main.ts", "src/cli", "src", "sql/0001_initial.sql", "sql", "package.json"]) age(path, 60);
  };
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    root = "";
  });

  it("is current after a complete build, not before one", () => {
    fakePackage();
    expect(stamp("current")).toBe(1);
    expect(stamp("begin")).toBe(0);
    expect(stamp("current")).toBe(1); // begun, never finished: a failed build
    expect(stamp("end")).toBe(0);
    expect(stamp("current")).toBe(0);
  });

  it.each(["src/cli/main.ts", "sql/0001_initial.sql", "package.json"])("is stale once %s changes", (path) => {
    fakePackage();
    stamp("begin");
    stamp("end");
    writeFileSync(join(root, path), "changed\n");
    expect(stamp("current")).toBe(1);
  });

  it("is stale when a source is added or removed, or saved while the build ran", () => {
    fakePackage();
    stamp("begin");
    // Saved after the build began, before it ended: the stamp carries the beginning.
    writeFileSync(join(root, "src", "cli", "main.ts"), "changed during the build\n");
    stamp("end");
    expect(stamp("current")).toBe(1);

    fakePackage();
    stamp("begin");
    stamp("end");
    writeFileSync(join(root, "proto.proto"), "not an input\n");
    expect(stamp("current")).toBe(0);
    mkdirSync(join(root, "proto"));
    writeFileSync(join(root, "proto", "new.proto"), "syntax = \"proto3\";\n");
    expect(stamp("current")).toBe(1);
  });
});

import { readFileSync } from "node:fs";
import type { SidecarProcess } from "./sidecar-process.js";

/** The sidecar process's resident set size in MB, from /proc (Linux). */
export function rssMb(sidecar: SidecarProcess): number {
  const status = readFileSync(`/proc/${sidecar.child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

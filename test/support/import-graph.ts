import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The folders of src/ as layers, and the check that every import points down
 * (ARCHITECTURE.md draws the same table). TypeScript's own pre-processor
 * finds the imports (static, `export … from`, `import type`, dynamic
 * `import()`), so a string or a comment that looks like one is not one.
 */

/** Bottom first. A folder may import its own files and any folder of a lower layer; never a peer or one above. */
export const LAYERS: readonly (readonly string[])[] = [
  ["domain", "gen"],
  ["ports", "config", "log", "sdk", "ui"],
  ["store"],
  ["principal-index", "embed"],
  ["recall"],
  ["trace", "eval"],
  ["server"],
  ["inspect", "metrics", "tracing", "mcp"],
  ["sidecar"],
  ["testing"],
  ["cli"],
  ["bench", "build"],
];

/** An import the layers forbid but the code keeps, with why. None today; add one only with its reason. */
export interface AllowedImport {
  from: string;
  to: string;
  reason: string;
}
export const ALLOWED: readonly AllowedImport[] = [];

/** One relative import: both ends as paths under the source root ("store/memory-store.ts"). */
export interface ImportEdge {
  from: string;
  to: string;
}

/** A file's top folder under the source root; a file at the root itself is its own name. */
export function folderOf(file: string): string {
  return file.split("/")[0]!;
}

/** The relative imports of one file's text, resolved against its path under the source root. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith("./") || spec.startsWith("../"))
    .map((spec) => ({ from: file, to: path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts") }));
}

/** Every relative import of every .ts and .tsx file under `root`. */
export function importGraph(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(entry.name)) edges.push(...importsOf(rel, readFileSync(path.join(root, rel), "utf8")));
    }
  };
  walk("");
  return edges;
}

/** Each layer's rank by folder name. */
function ranks(layers: readonly (readonly string[])[]): Map<string, number> {
  return new Map(layers.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));
}

/** What is wrong with one import: it points up or sideways, or names a folder the table does not place. */
export function violation(edge: ImportEdge, layers = LAYERS, allowed = ALLOWED): string | null {
  const from = folderOf(edge.from);
  const to = folderOf(edge.to);
  if (from === to) return null;
  const rank = ranks(layers);
  const [a, b] = [rank.get(from), rank.get(to)];
  if (a === undefined) return `${edge.from}: folder ${from}/ is in no layer (add it to LAYERS and ARCHITECTURE.md)`;
  if (b === undefined) return `${edge.from} imports ${edge.to}: ${to} is in no layer`;
  if (b < a) return null;
  if (allowed.some((x) => x.from === edge.from && x.to === edge.to)) return null;
  return `${edge.from} imports ${edge.to}: ${from}/ may not import ${b === a ? "its peer" : "the layer above,"} ${to}/`;
}

/** Every import of `edges` the layers forbid. */
export function violations(edges: readonly ImportEdge[], layers = LAYERS, allowed = ALLOWED): string[] {
  return edges.map((e) => violation(e, layers, allowed)).filter((v): v is string => v !== null);
}

/**
 * Line numbers of the elements of a JSON document's record arrays, so a bad
 * record in a pretty-printed export is reported by its line, as in a JSON
 * Lines file. JSON.parse gives no positions; this scans the text once,
 * tracking strings and nesting only.
 *
 * Returned by array: "" for a root array's elements, KEY for the elements of
 * the array at the root object's KEY ({"results": [...]}, {"edges": [...]}).
 */
export function elementLines(text: string): Map<string, number[]> {
  const lines = new Map<string, number[]>();
  // One entry per open container: its kind, the root key it sits under, whether a value is expected next.
  const stack: { array: boolean; key: string; expectValue: boolean }[] = [];
  let line = 1;
  let rootKey = "";
  let keyStart = -1;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\n") {
      line += 1;
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\r") continue;
    const top = stack[stack.length - 1];
    if (top?.array && top.expectValue && ch !== "]") {
      top.expectValue = false;
      const rootArray = stack.length === 1;
      const underRootObject = stack.length === 2 && !stack[0]!.array;
      if (rootArray || underRootObject) {
        const key = rootArray ? "" : top.key;
        lines.set(key, [...(lines.get(key) ?? []), line]);
      }
    }
    if (ch === '"') {
      const start = i;
      for (i += 1; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i += 1;
      if (stack.length === 1 && !stack[0]!.array && expectKey) {
        keyStart = start;
        rootKey = JSON.parse(text.slice(keyStart, i + 1)) as string;
        expectKey = false;
      }
      continue;
    }
    if (ch === "{" || ch === "[") {
      stack.push({ array: ch === "[", key: stack.length === 1 ? rootKey : (top?.key ?? ""), expectValue: ch === "[" });
      if (ch === "{" && stack.length === 1) expectKey = true;
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      if (top?.array) top.expectValue = true;
      else if (stack.length === 1) expectKey = true;
    }
  }
  return lines;
}

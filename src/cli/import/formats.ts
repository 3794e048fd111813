import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";
import { UsageError } from "../usage-error.js";
import { isGraphiti, isGraphitiEdge, mapGraphiti } from "./graphiti.js";
import { elementLines } from "./json-positions.js";
import { isMem0, mapMem0 } from "./mem0.js";
import { emptyMapped, isObject, mapEach, type Mapped, type MappingOptions } from "./peer-record.js";
import { isMessage, isOpenAiMessages, mapTranscript } from "./transcript.js";

/**
 * The formats `recall import` reads, told apart by their shape unless
 * --format names one: recall's own JSON Lines, mem0's get_all() output,
 * Graphiti/Zep entity edges, chat transcripts (JSON Lines or the OpenAI
 * messages shape).
 */

export const FORMATS = ["recall", "mem0", "graphiti", "transcript"] as const;
export type Format = (typeof FORMATS)[number];

export function mapFile(text: string, options: MappingOptions, format?: Format): { format: Format; mapped: Mapped } {
  const whole = parseWhole(text);
  if (whole.value !== undefined && !isJsonLinesRecord(whole.value)) return mapDocument(text, whole.value, options, format);
  const firstLine = text.split(/\r?\n/).find((l) => l.trim() !== "");
  if (whole.error && firstLine !== undefined && !parsesAsJson(firstLine)) {
    // Neither one document nor JSON Lines: a broken document, reported where it breaks.
    const mapped = emptyMapped();
    mapped.rejected.push({ line: lineOfError(text, whole.error), message: `not JSON: ${whole.error.message}` });
    return { format: format ?? "recall", mapped };
  }
  return mapJsonLines(text, options, format);
}

/** The file as one JSON document, or the parser's error (JSON Lines, or not JSON at all). */
function parseWhole(text: string): { value?: JsonValue; error?: Error } {
  try {
    return { value: JSON.parse(text) as JsonValue };
  } catch (error) {
    return { error: error as Error };
  }
}

function parsesAsJson(line: string): boolean {
  return parseWhole(line).value !== undefined;
}

/** The line of a JSON.parse error's "position N" (1 when it names none). */
function lineOfError(text: string, error: Error): number {
  const at = /position (\d+)/.exec(error.message);
  return at ? text.slice(0, Number(at[1])).split("\n").length : 1;
}

/** A one-line JSON Lines file parses as a whole too: one record, not a document. */
function isJsonLinesRecord(value: JsonValue): boolean {
  return isObject(value) && (value.belief !== undefined || value.episode !== undefined || isMessage(value) || isGraphitiEdge(value) || typeof value.memory === "string");
}

function mapDocument(text: string, root: JsonValue, options: MappingOptions, format: Format | undefined): { format: Format; mapped: Mapped } {
  const lines = elementLines(text);
  const found = format ?? (isMem0(root) ? "mem0" : isGraphiti(root) ? "graphiti" : isOpenAiMessages(root) ? "transcript" : undefined);
  if (found === "mem0") return { format: found, mapped: mapMem0(root, lines, options) };
  if (found === "graphiti") return { format: found, mapped: mapGraphiti(root, lines, options) };
  if (found === "transcript") {
    const key = Array.isArray(root) ? "" : "messages";
    const messages = (Array.isArray(root) ? root : isObject(root) && Array.isArray(root.messages) ? root.messages : []) as JsonValue[];
    return { format: found, mapped: mapTranscript(messages, (i) => lines.get(key)?.[i] ?? 1, (i) => (key === "" ? `[${i}]` : `messages[${i}]`), options) };
  }
  if (found === "recall") throw new UsageError("--format recall reads JSON Lines ({\"belief\": …} or {\"episode\": …} a line), not one JSON document");
  throw new UsageError('cannot tell the file\'s format: give --format (recall, mem0, graphiti, transcript); docs/importing.md shows each');
}

function mapJsonLines(text: string, options: MappingOptions, format: Format | undefined): { format: Format; mapped: Mapped } {
  const parsed: { line: number; value: JsonValue }[] = [];
  const bad = emptyMapped();
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") return;
    try {
      parsed.push({ line: index + 1, value: JSON.parse(line) as JsonValue });
    } catch (error) {
      bad.rejected.push({ line: index + 1, message: `not JSON: ${(error as Error).message}` });
    }
  });
  const first = parsed[0]?.value;
  const found: Format | undefined =
    format ??
    (first === undefined
      ? "recall"
      : isObject(first) && (first.belief !== undefined || first.episode !== undefined)
        ? "recall"
        : isMessage(first)
          ? "transcript"
          : isGraphitiEdge(first)
            ? "graphiti"
            : isObject(first) && typeof first.memory === "string"
              ? "mem0"
              : undefined);
  if (found === undefined) throw new UsageError('cannot tell the file\'s format: give --format (recall, mem0, graphiti, transcript); docs/importing.md shows each');
  const values = parsed.map((p) => p.value);
  const lineOf = (i: number) => parsed[i]?.line ?? 1;
  const jsonLines = new Map([["", parsed.map((p) => p.line)]]);
  const mapped =
    found === "recall"
      ? mapRecall(values, lineOf)
      : found === "transcript"
        ? mapTranscript(values, lineOf, () => "", options)
        : found === "graphiti"
          ? mapGraphiti(values, jsonLines, options, true)
          : mapMem0(values, jsonLines, options);
  // Lines that were not JSON come first, in line order with the rest.
  mapped.rejected = [...bad.rejected, ...mapped.rejected].sort((a, b) => a.line - b.line);
  return { format: found, mapped };
}

/** recall's own format: each line already is a record. */
function mapRecall(values: readonly JsonValue[], lineOf: (i: number) => number): Mapped {
  const mapped = emptyMapped();
  mapEach(mapped, values, lineOf, (value, i) => {
    const record = value as JsonObject;
    if (!isObject(value) || (isObject(record.belief) === isObject(record.episode))) {
      throw new InvalidArgumentError("line", 'must hold a "belief" or an "episode" object');
    }
    mapped.records.push({ line: lineOf(i), at: "", record: isObject(record.belief) ? { belief: record.belief } : { episode: record.episode as JsonObject } });
  });
  return mapped;
}

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";
import { emptyMapped, isObject, leaveOut, mapEach, objectAt, requiredText, text, time, type Mapped, type MappingOptions } from "./peer-record.js";
import { stableUuid } from "./stable-id.js";

/**
 * Chat transcripts as episodes: JSON Lines of {role, content, time} (one
 * message a line), or the OpenAI messages shape, `[{"role", "content"}]` or
 * `{"messages": [...]}` (a chat completion request). docs/importing.md maps
 * each field.
 */

export function isMessage(record: JsonValue | undefined): boolean {
  return isObject(record) && typeof record.role === "string" && "content" in record;
}

export function isOpenAiMessages(root: JsonValue): boolean {
  if (Array.isArray(root)) return isMessage(root[0]);
  return isObject(root) && Array.isArray(root.messages) && isMessage(root.messages[0]);
}

/** `messages`: the records in file order; `lineOf`/`pathOf` locate one. */
export function mapTranscript(messages: readonly JsonValue[], lineOf: (i: number) => number, pathOf: (i: number) => string, options: MappingOptions): Mapped {
  const mapped = emptyMapped();
  mapEach(mapped, messages, lineOf, (item, i) => {
    const at = pathOf(i) || "message";
    const message = objectAt(item, at);
    const role = requiredText(message, "role", at);
    // A system prompt is configuration, not something that happened in the conversation.
    if (role === "system" || role === "developer") return leaveOut(mapped, `${role} messages`);
    const session = text(message, "session_id", at) ?? options.session;
    const occurredAt = time(message, "time", at) ?? time(message, "timestamp", at) ?? time(message, "created_at", at) ?? options.at.toISOString();
    const { kind, content } = body(message, role, at);
    const episode: JsonObject = {
      // The session and the record's position: a re-import of the same (or a longer) transcript gets the same ids.
      episode_id: stableUuid("transcript", session, String(i)),
      session_id: session,
      occurred_at: occurredAt,
      sequence: String(i),
      actor: text(message, "name", at) ?? role,
      kind,
      content,
      project: options.scope,
    };
    mapped.records.push({ line: lineOf(i), at: pathOf(i), record: { episode } });
  });
  return mapped;
}

/** The text of a message: a string, or the text parts of a content list; an assistant's tool calls when it has no text. */
function body(message: JsonObject, role: string, at: string): { kind: string; content: string } {
  const content = message.content;
  let textOf = "";
  if (typeof content === "string") textOf = content;
  else if (Array.isArray(content)) textOf = content.flatMap((part) => (isObject(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n");
  else if (content !== null && content !== undefined) throw new InvalidArgumentError(`${at}.content`, "must be a string or a list of content parts");
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  if (textOf.trim() === "" && calls.length > 0) {
    const described = calls.map((c) => (isObject(c.function) ? `${String(c.function.name)}(${String(c.function.arguments ?? "")})` : JSON.stringify(c)));
    return { kind: "tool_call", content: described.join("\n") };
  }
  if (textOf.trim() === "") throw new InvalidArgumentError(`${at}.content`, "has no text");
  return { kind: role === "tool" ? "tool_result" : "message", content: textOf };
}

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";
import { beliefDefaults, emptyMapped, leaveOut, mapEach, objectAt, requiredText, text, time, type Mapped, type MappingOptions } from "./peer-record.js";
import { peerUuid } from "./stable-id.js";

/**
 * mem0's memories, as `Memory.get_all()` returns them (v1.1: `{"results":
 * [...]}`, with "relations" when graph memory is on; v1.0: the bare list) or
 * as the platform's export lists them. One memory becomes one belief about
 * the user (or agent) it belongs to; docs/importing.md maps each field.
 */

export function isMem0(root: JsonValue): boolean {
  const items = mem0Items(root);
  return items !== undefined && items.length > 0 && typeof (items[0] as JsonObject).memory === "string";
}

function mem0Items(root: JsonValue): JsonValue[] | undefined {
  if (Array.isArray(root)) return root;
  if (typeof root === "object" && root !== null && Array.isArray(root.results)) return root.results;
  return undefined;
}

export function mapMem0(root: JsonValue, lines: Map<string, number[]>, options: MappingOptions): Mapped {
  const mapped = emptyMapped();
  const items = mem0Items(root) ?? [];
  const key = Array.isArray(root) ? "" : "results";
  const lineOf = (i: number) => lines.get(key)?.[i] ?? 1;
  const path = (i: number) => (key === "" ? `[${i}]` : `results[${i}]`);
  if (!Array.isArray(root) && Array.isArray((root as JsonObject).relations)) {
    for (let i = 0; i < ((root as JsonObject).relations as JsonValue[]).length; i++) leaveOut(mapped, "graph relations (import the graph store's own dump)");
  }
  mapEach(mapped, items, lineOf, (item, i) => {
    const at = path(i);
    const memory = objectAt(item, at);
    const userId = text(memory, "user_id", at);
    const agentId = text(memory, "agent_id", at);
    const owner = userId ?? agentId;
    if (owner !== undefined) mapped.owners.add(owner);
    if (options.user !== undefined && owner !== options.user) return leaveOut(mapped, `memories of another user than ${options.user}`);
    const subject = options.subject ?? owner;
    if (subject === undefined) throw new InvalidArgumentError(`${at}.user_id`, "is required (or agent_id, or --subject)");
    const createdAt = time(memory, "created_at", at);
    const updatedAt = time(memory, "updated_at", at);
    const recordedAt = updatedAt ?? createdAt;
    const expiration = time(memory, "expiration_date", at);
    const belief: JsonObject = {
      belief_id: peerUuid("mem0", requiredText(memory, "id", at)),
      subject,
      statement: requiredText(memory, "memory", at),
      status: "BELIEF_STATUS_ACTIVE",
      ...beliefDefaults(options, { beliefType: "user_model_attr", authority: "AUTHORITY_INFERRED", confidence: 0.7, scopeLevel: "SCOPE_LEVEL_USER", portability: "PORTABILITY_PORTABLE" }),
      ...(createdAt ? { valid_from: createdAt } : {}),
      ...(recordedAt ? { recorded_at: recordedAt, last_evidence_at: recordedAt } : {}),
      ...(expiration ? { expires_hint: expiration } : {}),
    };
    mapped.records.push({ line: lineOf(i), at, record: { belief } });
  });
  return mapped;
}

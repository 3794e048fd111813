import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "../../domain/errors.js";
import { beliefDefaults, emptyMapped, isObject, leaveOut, mapEach, objectAt, requiredText, stringList, text, time, type Mapped, type MappingOptions } from "./peer-record.js";
import { peerUuid, stableUuid } from "./stable-id.js";

/**
 * Graphiti's (and Zep's) entity edges: `EntityEdge.model_dump(mode="json")`
 * objects, as a JSON list, as JSON Lines, or in `{"edges": [...], "nodes":
 * [...], "episodes": [...]}` with the entity nodes (their names are the
 * subjects) and the episodic nodes (imported as episodes). Valid time,
 * transaction time and supersession map as docs/importing.md describes.
 */

interface Edge {
  at: string;
  line: number;
  raw: JsonObject;
  uuid: string;
  source: string;
  target: string;
  validAt: string | undefined;
  invalidAt: string | undefined;
  expiredAt: string | undefined;
  createdAt: string | undefined;
}

export function isGraphitiEdge(record: JsonValue | undefined): boolean {
  return isObject(record) && typeof record.fact === "string" && "source_node_uuid" in record;
}

export function isGraphiti(root: JsonValue): boolean {
  if (Array.isArray(root)) return isGraphitiEdge(root[0]);
  return isObject(root) && Array.isArray(root.edges);
}

export function mapGraphiti(root: JsonValue, lines: Map<string, number[]>, options: MappingOptions, jsonLines = false): Mapped {
  const mapped = emptyMapped();
  const edges = (Array.isArray(root) ? root : isObject(root) && Array.isArray(root.edges) ? root.edges : []) as JsonValue[];
  const nodes = (isObject(root) && Array.isArray(root.nodes) ? root.nodes : []) as JsonValue[];
  const episodes = (isObject(root) && Array.isArray(root.episodes) ? root.episodes : []) as JsonValue[];
  const edgeKey = Array.isArray(root) ? "" : "edges";
  const lineIn = (key: string) => (i: number) => lines.get(key)?.[i] ?? 1;
  const pathIn = (key: string) => (i: number) => (jsonLines ? "" : key === "" ? `[${i}]` : `${key}[${i}]`);

  const names = new Map<string, string>();
  mapEach(mapped, nodes, lineIn("nodes"), (node, i) => {
    const n = objectAt(node, pathIn("nodes")(i));
    names.set(requiredText(n, "uuid", pathIn("nodes")(i)), requiredText(n, "name", pathIn("nodes")(i)));
  });
  mapEach(mapped, episodes, lineIn("episodes"), (node, i) => mapEpisode(mapped, objectAt(node, pathIn("episodes")(i)), pathIn("episodes")(i), lineIn("episodes")(i), i, options));

  const parsed: Edge[] = [];
  mapEach(mapped, edges, lineIn(edgeKey), (item, i) => {
    const at = pathIn(edgeKey)(i) || "edge";
    const raw = objectAt(item, at);
    const group = text(raw, "group_id", at);
    if (group !== undefined) mapped.owners.add(group);
    if (options.user !== undefined && group !== options.user) return leaveOut(mapped, `edges of another group than ${options.user}`);
    requiredText(raw, "fact", at);
    parsed.push({
      at,
      line: lineIn(edgeKey)(i),
      raw,
      uuid: requiredText(raw, "uuid", at),
      source: requiredText(raw, "source_node_uuid", at),
      target: requiredText(raw, "target_node_uuid", at),
      validAt: time(raw, "valid_at", at),
      invalidAt: time(raw, "invalid_at", at),
      expiredAt: time(raw, "expired_at", at),
      createdAt: time(raw, "created_at", at),
    });
  });

  const successors = successorsOf(parsed);
  for (const edge of parsed) {
    try {
      for (const belief of edgeBeliefs(edge, successors, names, options)) mapped.records.push({ line: edge.line, at: edge.at, record: { belief } });
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      mapped.rejected.push({ line: edge.line, message: error.message });
    }
  }
  return mapped;
}

/** The ids an edge is imported under: its own, and, once Graphiti closed its validity, the closed revision's. */
function idsOf(edge: Edge): string[] {
  const own = peerUuid("graphiti", edge.uuid);
  return edge.expiredAt !== undefined && edge.invalidAt !== undefined ? [own, stableUuid("graphiti", edge.uuid, "closed")] : [own];
}

/**
 * Graphiti invalidates an edge when a newer one contradicts it: it sets the
 * old edge's invalid_at to the new edge's valid_at and its expired_at to the
 * time it noticed, and keeps no link between them. The link is recovered
 * here: an edge that starts to hold exactly when an expired edge stopped, and
 * shares one of its nodes, supersedes it.
 */
function successorsOf(edges: readonly Edge[]): Map<Edge, Edge[]> {
  const byStart = new Map<string, Edge[]>();
  for (const e of edges) if (e.validAt !== undefined) byStart.set(e.validAt, [...(byStart.get(e.validAt) ?? []), e]);
  const replaced = new Map<Edge, Edge[]>();
  for (const old of edges) {
    if (old.expiredAt === undefined || old.invalidAt === undefined) continue;
    for (const next of byStart.get(old.invalidAt) ?? []) {
      const shared = [next.source, next.target].some((n) => n === old.source || n === old.target);
      if (next !== old && shared) replaced.set(next, [...(replaced.get(next) ?? []), old]);
    }
  }
  return replaced;
}

function edgeBeliefs(edge: Edge, successors: Map<Edge, Edge[]>, names: Map<string, string>, options: MappingOptions): JsonObject[] {
  const { raw, at } = edge;
  const subject = options.subject ?? names.get(edge.source) ?? text(raw, "source_node_name", at);
  if (subject === undefined) throw new InvalidArgumentError(`${at}.source_node_uuid`, "names a node that is not in the file (give \"nodes\", or --subject)");
  const superseded = [...successors.values()].some((olds) => olds.includes(edge));
  const ended = edge.invalidAt !== undefined && Date.parse(edge.invalidAt) <= options.now.getTime();
  const common: JsonObject = {
    subject,
    statement: requiredText(raw, "fact", at),
    predicate_key: `graphiti:${edge.uuid}`,
    ...beliefDefaults(options, { beliefType: "relationship", authority: "AUTHORITY_INFERRED", confidence: 0.7, scopeLevel: "SCOPE_LEVEL_USER", portability: "PORTABILITY_CONTEXTUAL" }),
    ...(edge.validAt ?? edge.createdAt ? { valid_from: edge.validAt ?? edge.createdAt } : {}),
    source_episode_ids: stringList(raw, "episodes", at).map((id) => peerUuid("graphiti", id)),
    supersedes: (successors.get(edge) ?? []).flatMap(idsOf),
  };
  const lifecycle = (closed: boolean) => (!closed ? "BELIEF_STATUS_ACTIVE" : superseded ? "BELIEF_STATUS_SUPERSEDED" : "BELIEF_STATUS_EXPIRED");
  const [own, closedId] = idsOf(edge);
  const recorded: JsonObject = edge.createdAt ? { recorded_at: edge.createdAt } : {};
  if (edge.expiredAt === undefined) {
    // Never expired: one record; an invalid_at Graphiti extracted with the fact closes its validity.
    return [{ ...common, belief_id: own!, status: lifecycle(ended), ...recorded, ...(edge.invalidAt ? { valid_to: edge.invalidAt } : {}) }];
  }
  // Expired: the record as it stood until expired_at, withdrawn then ...
  const asRecorded: JsonObject = { ...common, belief_id: own!, status: lifecycle(true), ...recorded, retracted_at: edge.expiredAt };
  if (closedId === undefined) return [asRecorded];
  // ... and, when Graphiti closed its validity, the corrected record on file from expired_at on.
  return [asRecorded, { ...common, belief_id: closedId, status: lifecycle(ended), recorded_at: edge.expiredAt, valid_to: edge.invalidAt! }];
}

/** An EpisodicNode (uuid, name, content, source, valid_at, created_at, group_id) as an episode of the import's session. */
function mapEpisode(mapped: Mapped, node: JsonObject, at: string, line: number, index: number, options: MappingOptions): void {
  const group = text(node, "group_id", at);
  if (group !== undefined) mapped.owners.add(group);
  if (options.user !== undefined && group !== undefined && group !== options.user) return leaveOut(mapped, `episodes of another group than ${options.user}`);
  const occurredAt = time(node, "valid_at", at) ?? time(node, "created_at", at);
  if (occurredAt === undefined) throw new InvalidArgumentError(`${at}.valid_at`, "is required (or created_at)");
  const episode: JsonObject = {
    episode_id: peerUuid("graphiti", requiredText(node, "uuid", at)),
    session_id: options.session,
    occurred_at: occurredAt,
    sequence: String(index),
    kind: text(node, "source", at) ?? "message",
    content: requiredText(node, "content", at),
    project: options.scope,
  };
  mapped.records.push({ line, at, record: { episode } });
}

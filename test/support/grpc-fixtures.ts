import { randomUUID } from "node:crypto";
import type { Json } from "./grpc-client.js";

/** Proto-JSON (grpc-js, keepCase) builders for requests. */

export function ts(iso: string): Json {
  return { seconds: String(Math.floor(new Date(iso).getTime() / 1000)), nanos: 0 };
}

export function beliefMsg(overrides: Json = {}): Json {
  return {
    belief_id: randomUUID(),
    subject: "Andy",
    statement: "Andy prefers concise writing.",
    belief_type: "preference",
    status: "BELIEF_STATUS_ACTIVE",
    confidence: 0.9,
    authority: "AUTHORITY_USER",
    origin_scope: "veetbot",
    scope_level: "SCOPE_LEVEL_USER",
    portability: "PORTABILITY_PORTABLE",
    recorded_at: ts("2026-01-01T00:00:00Z"),
    ...overrides,
  };
}

export function episodeMsg(overrides: Json = {}): Json {
  return {
    episode_id: randomUUID(),
    session_id: "s1",
    occurred_at: ts("2026-01-01T00:00:00Z"),
    actor: "user",
    kind: "message",
    content: "hello",
    project: "veetbot",
    ...overrides,
  };
}

export function newIdentity(label = "p"): { tenant: string; principal: string } {
  const suffix = randomUUID().slice(0, 8);
  return { tenant: `tenant-${suffix}`, principal: `${label}-${suffix}` };
}

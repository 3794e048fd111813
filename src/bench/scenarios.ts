import { lexicalTerms } from "../recall/query-former.js";
import { openingGoals, PROJECTS, queryTexts } from "./corpus.js";
import type { BenchClient, Json } from "./grpc-client.js";
import { RAW_LEXICAL_SQL, rawLexicalParams } from "./raw-sql.js";

/**
 * The benchmark's operations, one per scenario; `seq` varies the request.
 * Each checks what it must (a cache hit is from cache, a cold open is not)
 * and counts it in `checks`, so a figure never silently measures the wrong path.
 */

export interface Scenario {
  name: string;
  note?: string;
  /** Concurrencies to run at; all of the run's when absent. */
  concurrencies?: number[];
  op: (seq: number) => Promise<void>;
  /** Unmeasured, once before the scenario's first run. */
  setup?: () => Promise<void>;
}

export interface Checks {
  degraded: number;
  notFromCache: number;
  coldFromCache: number;
}

export interface MeasuredPrincipal {
  principal: string;
  /** Its store head: the snapshot watermark its in-turn recalls send. */
  head: number;
}

export function scenarioInputs(seed: number) {
  return { queries: queryTexts(seed, 997), goals: openingGoals(seed, 101) };
}

const scopeOf = (seq: number) => PROJECTS[seq % PROJECTS.length]!;

export function healthScenario(name: string, client: BenchClient): Scenario {
  return {
    name,
    note: "grpc.health.v1, same channel",
    op: async () => {
      const status = await client.healthCheck();
      if (status !== "SERVING") throw new Error(`health: ${status}`);
    },
  };
}

/** The sessions the in-turn scenario's calls belong to: `bench-s0` … `bench-s49`. */
const IN_TURN_SESSIONS = 50;
const sessionOf = (seq: number) => `bench-s${seq % IN_TURN_SESSIONS}`;

/**
 * Opens each in-turn session with its snapshot, as an agent does before its
 * first turn: the in-turn calls then correct a snapshot this sidecar showed,
 * and their watermark is that snapshot's.
 */
export function openInTurnSessions(client: BenchClient, who: MeasuredPrincipal, seed: number): () => Promise<void> {
  const { goals } = scenarioInputs(seed);
  return async () => {
    for (let i = 0; i < IN_TURN_SESSIONS; i++) {
      // A snapshot that fails (a deadline on a loaded machine) leaves its session without one: the
      // in-turn calls in it are then counted as they come, rather than the whole run stopping here.
      await client
        .recall(
          { moment: "MOMENT_SNAPSHOT", session_id: sessionOf(i), session_type: "SESSION_TYPE_INTERACTIVE", query: { current_scope: scopeOf(i), text: goals[i % goals.length]! } },
          who.principal,
        )
        .catch(() => {});
    }
  };
}

export function inTurnOp(client: BenchClient, who: MeasuredPrincipal, seed: number, checks: Checks): (seq: number) => Promise<void> {
  const { queries } = scenarioInputs(seed);
  return async (seq) => {
    const q = queries[seq % queries.length]!;
    const result = await client.recall(
      {
        moment: "MOMENT_IN_TURN",
        session_id: sessionOf(seq),
        turn_id: `t${seq}`,
        snapshot_watermark: String(who.head),
        query: { current_scope: scopeOf(seq), text: q.text, subjects: q.subjects },
      },
      who.principal,
    );
    countDegraded(result, checks);
  };
}

export function searchOp(client: BenchClient, who: MeasuredPrincipal, seed: number, checks: Checks): (seq: number) => Promise<void> {
  const { queries } = scenarioInputs(seed);
  return async (seq) => {
    const q = queries[(seq * 7) % queries.length]!;
    const result = await client.search(
      { text: q.text, subjects: q.subjects, scope: scopeOf(seq), session_id: `bench-s${seq % 50}` },
      who.principal,
    );
    countDegraded(result, checks);
  };
}

/** A cache miss every time: the window size is part of the cache key, and 2% of it stays above the caps. */
export function coldSnapshotOp(client: BenchClient, who: MeasuredPrincipal, seed: number, checks: Checks): (seq: number) => Promise<void> {
  const { goals } = scenarioInputs(seed);
  return async (seq) => {
    const result = await client.recall(
      {
        moment: "MOMENT_SNAPSHOT",
        session_id: `bench-open-${seq}`,
        session_type: "SESSION_TYPE_INTERACTIVE",
        context_window_tokens: 200_000 + seq,
        query: { current_scope: scopeOf(seq), text: goals[seq % goals.length]! },
      },
      who.principal,
    );
    countDegraded(result, checks);
    if (result.from_cache) checks.coldFromCache += 1;
  };
}

export function cachedSnapshotOp(client: BenchClient, who: MeasuredPrincipal, seed: number, checks: Checks): (seq: number) => Promise<void> {
  const { goals } = scenarioInputs(seed);
  return async (seq) => {
    const result = await client.recall(
      {
        moment: "MOMENT_SNAPSHOT",
        session_id: `bench-cached-${seq}`,
        session_type: "SESSION_TYPE_INTERACTIVE",
        context_window_tokens: 200_000,
        query: { current_scope: "veetbot", text: goals[0]! },
      },
      who.principal,
    );
    if (!result.from_cache) checks.notFromCache += 1;
  };
}

/** The lexical arm's SQL shape with the in-turn hard filter, run by the application itself (postgres.js). */
export function rawLexicalOp(
  query: (text: string, params: unknown[]) => Promise<unknown>,
  tenant: string,
  who: MeasuredPrincipal,
  seed: number,
): (seq: number) => Promise<void> {
  const { queries } = scenarioInputs(seed);
  return async (seq) => {
    const q = queries[seq % queries.length]!;
    const p = rawLexicalParams({
      tenant,
      principal: who.principal,
      terms: lexicalTerms(q.text),
      subjects: q.subjects,
      currentScope: scopeOf(seq),
      now: new Date(),
    });
    await query(RAW_LEXICAL_SQL, p);
  };
}

function countDegraded(result: Json, checks: Checks): void {
  if ((result.arms_degraded as string[]).length > 0) checks.degraded += 1;
}

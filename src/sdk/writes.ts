import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type Client } from "@connectrpc/connect";
import { citedPrefixes, resolveShortId } from "../domain/short-id.js";
import { InspectService, type InspectedBelief } from "../gen/memory/v1/inspect_service_pb.js";
import { BeliefSchema, Sensitivity, type Belief } from "../gen/memory/v1/types_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";
import { RecallError } from "./errors.js";
import { throwIfAny, toBelief, toEpisode, type BeliefInput, type BeliefJson, type EpisodeInput, type EpisodeJson, type Problems } from "./write-input.js";

/**
 * The write helpers: what an application calls to get memories in, on top of
 * MemoryWriteService. A plain `remember(subject, statement)` gets the
 * defaults of BELIEF_DEFAULTS (a user-stated, portable, active belief at user
 * scope, learned in the client's scope); `replace` writes a successor that
 * names the old belief in `supersedes` (the succession rule: the old row may
 * stay as it is); `retract` and `markConflict` write a stored belief again
 * with one change. Every id is chosen before the call, so a retry after
 * UNAVAILABLE writes the same rows (PutBeliefs is idempotent by id).
 */

/**
 * What a plain `remember(subject, statement)` means: something the user said
 * about themselves, to be used everywhere, at full weight. Each is
 * overridable per call; the table in docs/writing-memories.md says why.
 */
export const BELIEF_DEFAULTS = {
  beliefType: "preference",
  status: "active",
  confidence: 0.9,
  authority: "user",
  scopeLevel: "user",
  portability: "portable",
} as const satisfies Partial<BeliefInput>;

const PUT = "MemoryWriteService.PutBeliefs";
const APPEND = "MemoryWriteService.AppendEpisodes";
const GET = "InspectService.GetBelief";

export interface WriteCallOptions {
  deadlineMs?: number;
  signal?: AbortSignal;
}

/** remember's options: any belief field but the two it takes, and the call's. */
export type RememberOptions = Partial<Omit<BeliefInput, "subject" | "statement">> & WriteCallOptions;

/** What a belief write did. */
export interface Written {
  /** The belief written (generated when the input had none). */
  beliefId: string;
  /** 1 when the row was inserted or changed, 0 for an identical re-write. */
  written: number;
  /** The principal's store position after the write. */
  storePosition: bigint;
  /** PutBeliefsResponse.warnings: e.g. an id whose short id another belief has. */
  warnings: string[];
}

export interface WrittenMany extends Omit<Written, "beliefId"> {
  /** The ids, in the order given. */
  beliefIds: string[];
}

export interface Appended {
  episodeIds: string[];
  appended: number;
  storePosition: bigint;
}

export interface WriteHelpers {
  /** Writes one belief with the documented defaults; returns its (generated) id. */
  remember(subject: string, statement: string, options?: RememberOptions): Promise<Written>;
  /** Writes 1 to 1000 beliefs in one atomic call, each with remember's defaults (camelCase or snake_case JSON shape). */
  rememberMany(beliefs: readonly (BeliefInput | BeliefJson)[], options?: WriteCallOptions): Promise<WrittenMany>;
  /**
   * Writes a successor of `oldId`: same subject, type, predicate key, origin,
   * scope level, portability and sensitivity as the old belief unless given;
   * `supersedes` names the old one, which recall stops showing.
   */
  replace(oldId: string, statement: string, options?: RememberOptions): Promise<Written & { replaced: string }>;
  /** Withdraws a belief as known (sets its retracted_at): it leaves live recall; `known_at` queries before now still see it. */
  retract(beliefId: string, options?: WriteCallOptions & { at?: Date }): Promise<Written>;
  /** Records that two beliefs contradict each other: both are shown, each naming the other. */
  markConflict(beliefId: string, otherId: string, options?: WriteCallOptions): Promise<Written>;
  /** Appends 1 to 1000 episodes in one atomic call; an episode already there is left as it is. */
  appendEpisodes(episodes: readonly (EpisodeInput | EpisodeJson)[], options?: WriteCallOptions): Promise<Appended>;
}

export interface WriteDeps {
  write: Client<typeof MemoryWriteService>;
  inspect: Client<typeof InspectService>;
  /** The client's scope: a remembered belief's origin_scope and an episode's project unless given. */
  scope: string;
  /** A unary call under the client's deadline and retry policy. */
  call: <T>(method: string, o: WriteCallOptions | undefined, send: (opts: { timeoutMs: number; headers: Record<string, string>; signal?: AbortSignal }) => Promise<T>) => Promise<T>;
}

export function writeHelpers(deps: WriteDeps): WriteHelpers {
  const defaults = (input: BeliefInput | BeliefJson) => ({
    ...BELIEF_DEFAULTS,
    ...(deps.scope ? { originScope: deps.scope } : {}),
    ...(hasId(input) ? {} : { beliefId: randomUUID() }),
  });

  const put = async (beliefs: Belief[], o: WriteCallOptions | undefined) => {
    const { written, storePosition, warnings } = await deps.call(PUT, o, (opts) => deps.write.putBeliefs({ beliefs }, opts));
    return { written, storePosition, warnings: [...warnings] };
  };

  /** The stored belief, as the inspection API returns it to its own principal (every sensitivity). */
  const stored = async (beliefId: string, o: WriteCallOptions | undefined): Promise<InspectedBelief> => {
    const { belief } = await deps.call(GET, o, (opts) =>
      deps.inspect.getBelief({ beliefId, viewingSurface: { sensitivityCeiling: Sensitivity.RESTRICTED } }, opts),
    );
    if (!belief?.belief) throw new RecallError(Code.NotFound, GET, `belief ${beliefId} not found`, 1);
    return belief;
  };

  /** A stored belief to write again: refused when its statement is withheld (it never leaves the server). */
  const rewritable = async (beliefId: string, o: WriteCallOptions | undefined): Promise<Belief> => {
    const b = await stored(beliefId, o);
    if (b.withheldBySafety !== "") {
      throw new RecallError(
        Code.FailedPrecondition,
        PUT,
        `belief ${beliefId} is withheld by the safety pass (${b.withheldBySafety}): its statement never leaves the sidecar, ` +
          'so it cannot be written again from here; reject it instead (reject({ kind: "not_true" }))',
        0,
      );
    }
    return b.belief!;
  };

  return {
    async remember(subject, statement, options = {}) {
      const { deadlineMs, signal, ...fields } = options;
      const input = given({ subject, statement, ...fields });
      const problems: Problems = [];
      const belief = toBelief({ ...defaults(input), ...input }, "beliefs[0]", problems);
      throwIfAny(problems, PUT);
      return { beliefId: belief.beliefId, ...(await put([belief], callOptions(deadlineMs, signal))) };
    },

    async rememberMany(inputs, options) {
      const problems: Problems = [];
      const beliefs = inputs.map((input, i) => toBelief({ ...defaults(input), ...given(input) } as BeliefInput, `beliefs[${i}]`, problems));
      throwIfAny(problems, PUT);
      return { beliefIds: beliefs.map((b) => b.beliefId), ...(await put(beliefs, options)) };
    },

    async replace(oldId, statement, options = {}) {
      const { deadlineMs, signal, ...fields } = options;
      const o = callOptions(deadlineMs, signal);
      const old = (await stored(oldId, o)).belief!;
      const inherited = {
        subject: old.subject,
        beliefType: old.beliefType,
        predicateKey: old.predicateKey,
        originScope: old.originScope,
        scopeLevel: old.scopeLevel,
        portability: old.portability,
        sensitivity: old.sensitivity,
      };
      // What the old one leaves unset (0, "") takes the default.
      const kept = Object.fromEntries(Object.entries(inherited).filter(([, v]) => v !== 0 && v !== "")) as Partial<typeof inherited>;
      const input = { subject: old.subject, ...kept, statement, ...given(fields), supersedes: [old.beliefId, ...(fields.supersedes ?? [])] };
      const problems: Problems = [];
      const belief = toBelief({ ...defaults(input), ...input }, "beliefs[0]", problems);
      throwIfAny(problems, PUT);
      return { beliefId: belief.beliefId, replaced: old.beliefId, ...(await put([belief], o)) };
    },

    async retract(beliefId, options = {}) {
      const old = await rewritable(beliefId, options);
      if (old.retractedAt) return { beliefId: old.beliefId, written: 0, storePosition: 0n, warnings: [] };
      // Never before it was recorded (the sidecar refuses that).
      const at = new Date(Math.max((options.at ?? new Date()).getTime(), old.recordedAt ? timestampDate(old.recordedAt).getTime() : 0));
      const belief = create(BeliefSchema, { ...old, retractedAt: timestampFromDate(at) });
      return { beliefId: old.beliefId, ...(await put([belief], options)) };
    },

    async markConflict(beliefId, otherId, options) {
      // A withheld belief cannot be written again, but a conflict is named on either side.
      const [one, other] = await rewritable(beliefId, options).then(
        (b) => [b, otherId] as const,
        async (error: unknown) => {
          if (!(error instanceof RecallError) || error.code !== Code.FailedPrecondition) throw error;
          return [await rewritable(otherId, options), beliefId] as const;
        },
      );
      const partner = other.toLowerCase();
      if (one.conflictsWith.includes(partner)) return { beliefId: one.beliefId, written: 0, storePosition: 0n, warnings: [] };
      const belief = create(BeliefSchema, { ...one, conflictsWith: [...one.conflictsWith, partner] });
      return { beliefId: one.beliefId, ...(await put([belief], options)) };
    },

    async appendEpisodes(inputs, options) {
      const problems: Problems = [];
      const now = new Date();
      const episodes = inputs.map((input, i) =>
        toEpisode(
          {
            episodeId: randomUUID(),
            occurredAt: now,
            sequence: i,
            kind: "message",
            ...(deps.scope ? { project: deps.scope } : {}),
            ...given(input),
          },
          `episodes[${i}]`,
          problems,
        ),
      );
      throwIfAny(problems, APPEND);
      const { appended, storePosition } = await deps.call(APPEND, options, (opts) => deps.write.appendEpisodes({ episodes }, opts));
      return { episodeIds: episodes.map((e) => e.episodeId), appended, storePosition };
    },
  };
}

/**
 * The raw write client's batch requests, in any shape toMessage takes (the
 * snake_case fixture shape too), checked before they are encoded: a shape
 * the encoder cannot take is INVALID_ARGUMENT naming the fields, not its
 * INTERNAL "invalid int32: NaN". No defaults are added: raw is raw.
 */
export const encodableWrites: Record<string, (request: unknown) => unknown> = {
  putBeliefs: (request) => {
    const problems: Problems = [];
    const beliefs = listOf(request, "beliefs").map((b, i) => toBelief(b as BeliefInput, `beliefs[${i}]`, problems));
    throwIfAny(problems, PUT);
    return { beliefs };
  },
  appendEpisodes: (request) => {
    const problems: Problems = [];
    const episodes = listOf(request, "episodes").map((e, i) => toEpisode(e as EpisodeInput, `episodes[${i}]`, problems));
    throwIfAny(problems, APPEND);
    return { episodes };
  },
  rejectBelief: (request) => {
    const correction = (request as { correction?: unknown } | null | undefined)?.correction;
    if (correction === undefined || correction === null) return request;
    return { ...(request as object), correction: encodableCorrection(correction) };
  },
};

/** RejectBelief's correction (CHANGED), checked as a PutBeliefs belief is, under the path "correction". */
export function encodableCorrection(correction: unknown): Belief {
  const problems: Problems = [];
  const belief = toBelief(correction as BeliefInput, "correction", problems);
  throwIfAny(problems, "MemoryWriteService.RejectBelief");
  return belief;
}

function listOf(request: unknown, key: string): unknown[] {
  const list = (request as Record<string, unknown> | null | undefined)?.[key];
  return Array.isArray(list) ? list : [];
}

/**
 * The full ids of the beliefs a text cites (`[m:8f21a0c3]`, as the model
 * writes them from the block), among a recall's items: what to pass to
 * `cite`. A short id that names no item, or several, is left out.
 */
export function citedIds(text: string, result: { readonly items: readonly { readonly beliefId: string }[] }): string[] {
  const ids = result.items.map((i) => i.beliefId);
  return citedPrefixes(text)
    .map((prefix) => resolveShortId(prefix, ids))
    .filter((named) => named.length === 1)
    .map((named) => named[0]!);
}

function hasId(input: object): boolean {
  return ["beliefId", "belief_id"].some((k) => (input as Record<string, unknown>)[k] !== undefined);
}

/**
 * The input without its undefined fields, which mean "the default". It goes
 * after the defaults: a snake_case key ("belief_type") then comes later than
 * the default's camelCase one and wins, as toMessage reads keys in order.
 */
function given<T extends object>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as T;
}

function callOptions(deadlineMs: number | undefined, signal: AbortSignal | undefined): WriteCallOptions {
  return { ...(deadlineMs !== undefined ? { deadlineMs } : {}), ...(signal ? { signal } : {}) };
}

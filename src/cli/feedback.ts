import type { Config } from "../config/config.js";
import { sweepOnce } from "../trace/sweeper.js";
import { deleteSessionTraces } from "../trace/delete-session.js";
import { FEEDBACK } from "../domain/feedback.js";
import { PRINCIPAL_OPTIONS, json, parseArgs, principalFrom, withStore } from "./store-command.js";

/**
 * The CLI side of step 9's feedback and of the traces' retention:
 *   recall hints        subjects repeatedly queried with nothing rendered (re-derivation hints)
 *   recall promotions   carried beliefs the model cited (promotion candidates)
 *   recall events       the memory.recalled outbox, oldest first
 *   recall delete-session SESSION_ID   the session's traces, citations and events
 *   recall sweep        one bounded run of the retention and uncited-utility sweeps
 */

function usage(line: string): number {
  process.stderr.write(`usage: ${line}\n`);
  return 2;
}

export async function runHints(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...PRINCIPAL_OPTIONS, "min-misses": { type: "string" }, limit: { type: "string" } } });
  const principal = principalFrom(values);
  const minMisses = Number(values["min-misses"] ?? FEEDBACK.hintMinMisses);
  const limit = Number(values.limit ?? 100);
  if (!principal || !Number.isInteger(minMisses) || minMisses < 1 || !Number.isInteger(limit) || limit < 1) {
    return usage("recall hints [--min-misses N] [--limit N] --tenant T --principal P");
  }
  return withStore(config, "hints", async (store, out) => {
    out(json(await store.traces.rederivationHints(principal, { minMisses, limit })));
    return 0;
  });
}

export async function runPromotions(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...PRINCIPAL_OPTIONS, limit: { type: "string" } } });
  const principal = principalFrom(values);
  const limit = Number(values.limit ?? 100);
  if (!principal || !Number.isInteger(limit) || limit < 1) return usage("recall promotions [--limit N] --tenant T --principal P");
  return withStore(config, "promotions", async (store, out) => {
    out(json(await store.traces.promotionCandidates(principal, limit)));
    return 0;
  });
}

export async function runEvents(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...PRINCIPAL_OPTIONS, all: { type: "boolean" }, limit: { type: "string" } } });
  const principal = principalFrom(values);
  const limit = Number(values.limit ?? 100);
  if (!principal || !Number.isInteger(limit) || limit < 1) return usage("recall events [--all] [--limit N] --tenant T --principal P");
  return withStore(config, "events", async (store, out) => {
    out(json(await store.traces.recalledEvents(principal, { all: values.all ?? false, limit })));
    return 0;
  });
}

export async function runDeleteSession(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: PRINCIPAL_OPTIONS });
  const principal = principalFrom(values);
  const sessionId = positionals[0];
  if (!principal || !sessionId || positionals.length > 1) return usage("recall delete-session SESSION_ID --tenant T --principal P");
  return withStore(config, "delete-session", async (store, out) => {
    const deleted = await deleteSessionTraces(store, undefined, principal, sessionId);
    out(`deleted ${deleted.traces} traces, ${deleted.citations} citations and ${deleted.events} events of session ${sessionId}\n`);
    return 0;
  });
}

export async function runSweep(config: Config, args: string[]): Promise<number> {
  // No options: anything given is a usage error (thrown by parseArgs).
  parseArgs({ args, options: {} });
  return withStore(config, "sweep", async (store, out) => {
    const result = await sweepOnce(store.traces, new Date(), {
      batch: config.traces.sweepBatch,
      maxBatches: Number.MAX_SAFE_INTEGER,
      uncitedWindowHours: config.traces.uncitedWindowHours,
    });
    out(json(result));
    return 0;
  });
}

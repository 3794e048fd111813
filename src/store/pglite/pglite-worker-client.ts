import type { WorkerMemory, WorkerRequest } from "./pglite-worker.js";
import { receivedError, type SentError, type StartedWorker } from "../ephemeral-start.js";
import type { QueryOptions, Row, SqlClient, TransactionOptions } from "../sql-client.js";
import { assertBefore, beforeDeadline, StoreTimeoutError, WriteOutcomeUnknownError } from "../store-deadline.js";

/** A request without its id (the client numbers them); the union spread one member at a time. */
type Request = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

type Inbound = { type: "reply"; id: number; value?: unknown; error?: SentError } | { type: "notify"; sub: number; payload: string };

/**
 * The SqlClient of the ephemeral store, whose PGlite runs in a worker thread
 * (store/pglite/pglite-worker.ts). It keeps the in-process client's rules
 * (store/pglite/pglite-client.ts): the store deadline is checked before every
 * statement and before COMMIT, and a caller is answered when it passes.
 * Once the worker is gone, every call fails as a closed PGlite does (UNAVAILABLE).
 * `memory` reports what the worker's own heap holds (for tests and diagnosis).
 */
export async function pgliteWorkerClient(
  started: StartedWorker,
): Promise<{ client: SqlClient; fromTemplate: boolean; migrations: string[] | null; memory(): Promise<WorkerMemory> }> {
  const { worker } = started;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const listeners = new Map<number, (payload: string) => void>();
  let ids = 0;
  let gone: Error | undefined;
  // The worker keeps the process alive only while an answer is awaited, as a socket with a request out would.
  const hold = () => (pending.size > 0 ? worker.ref() : worker.unref());

  worker.on("message", (m: Inbound) => {
    if (m.type === "notify") return listeners.get(m.sub)?.(m.payload);
    const call = pending.get(m.id);
    pending.delete(m.id);
    hold();
    if (m.error) call?.reject(receivedError(m.error));
    else call?.resolve(m.value);
  });
  const fail = (error: Error) => {
    gone ??= error;
    for (const call of pending.values()) call.reject(gone);
    pending.clear();
    hold();
  };
  worker.on("error", (error) => fail(Object.assign(new Error(`PGlite is closed: its worker failed (${error.message})`), { cause: error })));
  worker.on("exit", (code) => fail(new Error(`PGlite is closed: its worker exited (code ${code})`)));

  const send = <T>(request: Request): Promise<T> => {
    if (gone) return Promise.reject(gone);
    const id = (ids += 1);
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      hold();
      try {
        worker.postMessage({ ...request, id });
      } catch (error) {
        // A parameter that cannot be copied to another thread.
        pending.delete(id);
        hold();
        reject(error as Error);
      }
    });
  };

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      try {
        if (!gone) await send({ op: "close" });
      } finally {
        await worker.terminate();
      }
    })());

  // `txAt`: inside a transaction, its deadline, which bounds every statement of it.
  const clientFor = (tx: number | undefined, txAt?: number): SqlClient => ({
    kind: "pglite",
    async query<T extends Row>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
      const at = tx === undefined ? options?.deadline : txAt;
      assertBefore(at);
      return beforeDeadline(send<T[]>({ op: "query", text, params, ...(tx === undefined ? {} : { tx }) }), at, () => new StoreTimeoutError());
    },
    async exec(script: string) {
      await send({ op: "exec", script, ...(tx === undefined ? {} : { tx }) });
    },
    async transaction<T>(work: (tx: SqlClient) => Promise<T>, options?: TransactionOptions): Promise<T> {
      // Inside a transaction, as with PGlite's own: the work joins it.
      if (tx !== undefined) return work(clientFor(tx, txAt));
      const at = options?.deadline;
      assertBefore(at);
      const state = { commitSent: false };
      const attempt = (async () => {
        const id = await send<number>({ op: "begin" });
        let result: T;
        try {
          // Queued behind other work past the deadline: nothing is run at all.
          assertBefore(at);
          result = await work(clientFor(id, at));
          // Not committed after the deadline.
          assertBefore(at);
        } catch (error) {
          await send({ op: "end", tx: id, commit: false }).catch(() => {});
          throw error;
        }
        state.commitSent = true;
        await send({ op: "end", tx: id, commit: true });
        return result;
      })();
      return beforeDeadline(attempt, at, () => (state.commitSent ? new WriteOutcomeUnknownError() : new StoreTimeoutError()));
    },
    async listen(channel, onNotify, onConnect) {
      if (tx !== undefined) throw new Error("LISTEN is not available inside a transaction");
      const sub = (ids += 1);
      listeners.set(sub, onNotify);
      await send({ op: "listen", channel, sub });
      // In process there is no connection to lose: "connected" exactly once.
      onConnect?.();
      return async () => {
        listeners.delete(sub);
        await send({ op: "unlisten", sub });
      };
    },
    close,
  });

  worker.ref();
  try {
    const { fromTemplate, migrations } = await started.ready;
    return { client: clientFor(undefined), fromTemplate, migrations, memory: () => send<WorkerMemory>({ op: "memory" }) };
  } catch (error) {
    await worker.terminate();
    throw error;
  } finally {
    hold();
  }
}

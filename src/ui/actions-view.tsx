import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { useEffect, useRef, useState } from "preact/hooks";
import type { GetPrincipalSummaryResponse } from "../gen/memory/v1/inspect_service_pb.js";
import { Authority, BeliefSchema, BeliefStatus, Moment, type Belief } from "../gen/memory/v1/types_pb.js";
import { RejectionKind } from "../gen/memory/v1/write_service_pb.js";
import { inspect, memory, write } from "./api.js";
import type { Navigate } from "./app.js";
import { REJECTION_WORDS } from "./words.js";

/**
 * Actions: correct the memory through the write RPCs an agent runtime uses
 * (RejectBelief, RecordCitations, ErasePrincipal), then show what the next
 * recall returns, so the effect is seen rather than assumed.
 */

export interface ActionTarget {
  beliefId?: string;
  statement?: string;
  subject?: string;
  traceId?: string;
  returned?: string[];
  turnId?: string;
  /** The project of the session the target came from (a trace's), for the next recall. */
  scope?: string;
}

interface NextRecall {
  rendered: string;
  gone: boolean | null;
  /** The project it ran in. */
  scope: string;
}

export function ActionsView(props: { target: ActionTarget; principal: GetPrincipalSummaryResponse; go: Navigate; onChanged: () => void }) {
  return (
    <div class="actions-view">
      <Reject target={props.target} onChanged={props.onChanged} />
      <Cite target={props.target} />
      <Erase principal={props.principal} target={props.target} onChanged={props.onChanged} />
    </div>
  );
}

/**
 * The project a recall "as in the session" runs with: the target's own
 * session's, else the latest session's. Without it every belief reads as
 * carried from elsewhere and its band drops: not the block the agent gets.
 * Returns the field's value, its setter, and `chosen()`: the project to run
 * in now, which waits for the session's when the person pressed a button
 * before it arrived (what they typed, even nothing, wins).
 */
function useSessionScope(target: ActionTarget): [string, (scope: string) => void, () => Promise<string>] {
  const [scope, setScope] = useState(target.scope ?? "");
  const typed = useRef<string | null>(null);
  const found = useRef<Promise<string>>(Promise.resolve(target.scope ?? ""));
  useEffect(() => {
    if (target.scope !== undefined) {
      found.current = Promise.resolve(target.scope);
      return;
    }
    found.current = inspect.listSessions({ pageSize: 1 }).then(
      (r) => r.sessions[0]?.currentScope ?? "",
      () => "",
    );
    void found.current.then((session) => setScope((shown) => (typed.current === null ? session : shown)));
  }, [target.scope]);
  const type = (value: string) => {
    typed.current = value;
    setScope(value);
  };
  const chosen = async () => (typed.current ?? (await found.current)).trim();
  return [scope, type, chosen];
}

/** The next recall, as the agent would get it in the session's project, about the same subject and words. */
async function nextRecall(text: string, subject: string, beliefId: string | null, scope: string): Promise<NextRecall> {
  let rendered = "";
  let ids: string[] = [];
  for await (const event of memory.recall({
    moment: Moment.IN_TURN,
    sessionId: "inspector",
    turnId: `inspector-check-${Date.now()}`,
    query: { text, subjects: subject ? [subject] : [], currentScope: scope },
  })) {
    if (event.event.case === "result") {
      rendered = event.event.value.rendered;
      ids = event.event.value.items.map((i) => i.beliefId);
    }
  }
  return { rendered, gone: beliefId ? !ids.includes(beliefId) : null, scope };
}

function Reject(props: { target: ActionTarget; onChanged: () => void }) {
  const [beliefId, setBeliefId] = useState(props.target.beliefId ?? "");
  const [kind, setKind] = useState<RejectionKind>(RejectionKind.NOT_TRUE);
  const [correction, setCorrection] = useState("");
  const [scope, setScope] = useState("");
  const [reason, setReason] = useState("");
  const [statement, setStatement] = useState(props.target.statement ?? "");
  const [project, setProject, chosenProject] = useSessionScope(props.target);
  const [result, setResult] = useState<{ message: string; next: NextRecall | null } | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (!beliefId.match(/^[0-9a-f-]{36}$/)) return;
    inspect.getBelief({ beliefId }).then(
      (d) => setStatement(d.belief?.belief?.statement ?? ""),
      () => setStatement(""),
    );
  }, [beliefId]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError("");
    setResult(null);
    try {
      const detail = await inspect.getBelief({ beliefId: beliefId.trim() });
      const old = detail.belief!.belief!;
      await write.rejectBelief({
        rejectionId: crypto.randomUUID(),
        beliefId: old.beliefId,
        kind,
        reason,
        scope: kind === RejectionKind.NOT_HERE ? scope : "",
        ...(kind === RejectionKind.CHANGED ? { correction: corrected(old, correction) } : {}),
      });
      const next = await nextRecall(old.statement || old.subject, old.subject, old.beliefId, await chosenProject());
      setResult({ message: `Recorded: ${REJECTION_WORDS[kind]}.`, next });
      props.onChanged();
    } catch (err) {
      setError(ConnectError.from(err).rawMessage);
    }
  };
  return (
    <section aria-labelledby="reject-title" data-testid="reject">
      <h2 id="reject-title">Reject a belief</h2>
      {!beliefId && <p class="muted">Open a belief in Memory and press “This is wrong…”, or paste its id.</p>}
      <form onSubmit={submit}>
        <label>
          Belief id <input value={beliefId} onInput={(e) => setBeliefId(e.currentTarget.value.trim())} required size={38} />
        </label>
        {statement && <p class="quote">“{statement}”</p>}
        <fieldset>
          <legend>What is wrong with it?</legend>
          {[RejectionKind.NOT_TRUE, RejectionKind.CHANGED, RejectionKind.NOT_HERE, RejectionKind.UNSPECIFIED].map((k) => (
            <label class="choice">
              <input type="radio" name="kind" checked={kind === k} onChange={() => setKind(k)} /> {REJECTION_WORDS[k]}
            </label>
          ))}
        </fieldset>
        {kind === RejectionKind.CHANGED && (
          <label>
            What is true now <input value={correction} onInput={(e) => setCorrection(e.currentTarget.value)} required />
          </label>
        )}
        {kind === RejectionKind.NOT_HERE && (
          <label>
            The project where it does not hold <input value={scope} onInput={(e) => setScope(e.currentTarget.value)} required />
          </label>
        )}
        <label>
          Why (optional) <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <label>
          Then check the next recall in project{" "}
          <input value={project} onInput={(e) => setProject(e.currentTarget.value)} placeholder="none" data-testid="next-recall-project" />
        </label>
        <button type="submit">Reject</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {result && <Outcome message={result.message} next={result.next} />}
    </section>
  );
}

/** The correction of a CHANGED rejection: the same fact, restated by the user, replacing the old one from now on. */
function corrected(old: Belief, statement: string): Belief {
  const now = timestampNow();
  return create(BeliefSchema, {
    ...old,
    beliefId: crypto.randomUUID(),
    statement,
    status: BeliefStatus.ACTIVE,
    authority: Authority.USER,
    confidence: Math.max(old.confidence, 0.9),
    validFrom: now,
    validTo: undefined,
    recordedAt: now,
    retractedAt: undefined,
    lastEvidenceAt: now,
    supersedes: [old.beliefId],
    conflictsWith: [],
    evidenceCount: 1,
    flaggedForReview: false,
    sourceEpisodeIds: [],
  });
}

function Outcome(props: { message: string; next: NextRecall | null }) {
  return (
    <div class="outcome" role="status" data-testid="outcome">
      <p class="ok">{props.message}</p>
      {props.next && (
        <>
          {props.next.gone !== null && (
            <p data-testid="next-recall-verdict">
              {props.next.gone ? "The next recall no longer returns it." : "The next recall still returns it (flagged beliefs are only weighed less)."}
            </p>
          )}
          <details open>
            <summary>The next recall's block{props.next.scope ? `, in project ${props.next.scope}` : ", in no project"}</summary>
            <pre class="block" data-testid="next-recall">{props.next.rendered}</pre>
          </details>
        </>
      )}
    </div>
  );
}

function Cite(props: { target: ActionTarget }) {
  const [traceId, setTraceId] = useState(props.target.traceId ?? "");
  const [chosen, setChosen] = useState<string[]>([]);
  const [message, setMessage] = useState("");
  const [error, setError] = useState("");
  const returned = props.target.traceId === traceId ? (props.target.returned ?? []) : [];
  const submit = (e: Event) => {
    e.preventDefault();
    setError("");
    write.recordCitations({ traceId: traceId.trim(), beliefIds: chosen, turnId: props.target.turnId ?? "" }).then(
      (r) => setMessage(`Recorded ${r.recorded} citation(s): the turn's view now marks them "used in the answer".`),
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  };
  return (
    <section aria-labelledby="cite-title">
      <h2 id="cite-title">Record what the model cited</h2>
      <p class="muted">Pick a trace in Turns and press “Record what the model cited…”, or paste a trace id and belief ids.</p>
      <form onSubmit={submit}>
        <label>
          Trace id <input value={traceId} onInput={(e) => setTraceId(e.currentTarget.value.trim())} size={38} required />
        </label>
        {returned.length > 0 ? (
          <fieldset>
            <legend>Cited beliefs</legend>
            {returned.map((id) => (
              <label class="choice">
                <input
                  type="checkbox"
                  checked={chosen.includes(id)}
                  onChange={() => setChosen((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id]))}
                />{" "}
                <code>[m:{id.slice(0, 8)}]</code>
              </label>
            ))}
          </fieldset>
        ) : (
          <label>
            Belief ids (comma-separated){" "}
            <input onInput={(e) => setChosen(e.currentTarget.value.split(",").map((s) => s.trim()).filter(Boolean))} size={38} />
          </label>
        )}
        <button type="submit">Record citations</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {message && <p class="ok" role="status">{message}</p>}
    </section>
  );
}

function Erase(props: { principal: GetPrincipalSummaryResponse; target: ActionTarget; onChanged: () => void }) {
  const [typed, setTyped] = useState("");
  const [, , chosenProject] = useSessionScope(props.target);
  const [result, setResult] = useState<{ message: string; next: NextRecall } | null>(null);
  const [error, setError] = useState("");
  const armed = typed === props.principal.principalId;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!armed) return;
    try {
      const r = await write.erasePrincipal({ tenantId: props.principal.tenantId, principalId: props.principal.principalId });
      const total = Object.values(r.deleted).reduce((a, b) => a + b, 0);
      const next = await nextRecall("everything you know about me", "", null, await chosenProject());
      setResult({ message: `Erased: ${total} rows deleted.`, next });
    } catch (err) {
      setError(ConnectError.from(err).rawMessage);
    }
  };
  return (
    <section aria-labelledby="erase-title" class="danger">
      <h2 id="erase-title">Erase this principal</h2>
      <p>
        Deletes everything stored for <strong>{props.principal.principalId}</strong>: beliefs, episodes, traces, citations, rejections. It
        cannot be undone.
      </p>
      <form onSubmit={submit}>
        <label>
          Type <code>{props.principal.principalId}</code> to confirm{" "}
          <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />
        </label>
        <button type="submit" disabled={!armed} class="destructive">
          Erase everything
        </button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {result && (
        <>
          <Outcome message={result.message} next={result.next} />
          <button onClick={props.onChanged}>Reload the page's counts</button>
        </>
      )}
    </section>
  );
}

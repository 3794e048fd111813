import { ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import type { ExplainTraceResponse, GetRenderedBlockResponse, InspectedSession, InspectedTurn, TraceSummary } from "../gen/memory/v1/inspect_service_pb.js";
import { CandidateOutcome } from "../gen/memory/v1/inspect_service_pb.js";
import type { RecallTrace, RecallTraceView } from "../gen/memory/v1/types_pb.js";
import { Sensitivity } from "../gen/memory/v1/types_pb.js";
import { inspect, memory } from "./api.js";
import type { Navigate } from "./app.js";
import { viewingSurface, type Ceiling } from "./ceiling.js";
import { BAND_WORDS, MOMENT_WORDS, OUTCOME_WORDS, SENSITIVITY_WORDS, dateTime, shortId, trustLabel } from "./words.js";

/** Turns: sessions, their turns, and "what did the agent know when it said that" (the user view), with the full trace for an operator. */
export function TurnsView(props: { go: Navigate; ceiling: Ceiling }) {
  const [sessions, setSessions] = useState<InspectedSession[]>([]);
  const [nextSessions, setNextSessions] = useState("");
  const [session, setSession] = useState<string | null>(null);
  const [turns, setTurns] = useState<InspectedTurn[]>([]);
  const [turn, setTurn] = useState<InspectedTurn | null>(null);
  const [error, setError] = useState("");
  const fail = (err: unknown) => setError(ConnectError.from(err).rawMessage);

  useEffect(() => {
    inspect.listSessions({ pageSize: 50 }).then((r) => {
      setSessions(r.sessions);
      setNextSessions(r.nextPageToken);
      if (r.sessions[0]) setSession(r.sessions[0].sessionId);
    }, fail);
  }, []);
  useEffect(() => {
    if (!session) return;
    setTurn(null);
    inspect.listTurns({ sessionId: session, pageSize: 200 }).then((r) => setTurns(r.turns), fail);
  }, [session]);

  return (
    <div class="turns">
      <nav class="column" aria-label="Sessions">
        <h2>Sessions</h2>
        {sessions.length === 0 && <p class="muted">No recalls have been traced yet.</p>}
        <ul class="picks">
          {sessions.map((s) => (
            <li>
              <button aria-pressed={s.sessionId === session} onClick={() => setSession(s.sessionId)}>
                <strong>{s.sessionId}</strong>
                <span class="muted">
                  {s.turns} turns · {dateTime(s.lastAt)}
                </span>
              </button>
            </li>
          ))}
        </ul>
        {nextSessions && (
          <button
            class="more"
            onClick={() =>
              inspect.listSessions({ pageSize: 50, pageToken: nextSessions }).then((r) => {
                setSessions((s) => [...s, ...r.sessions]);
                setNextSessions(r.nextPageToken);
              }, fail)
            }
          >
            More sessions
          </button>
        )}
      </nav>
      <nav class="column" aria-label="Turns">
        <h2>Turns</h2>
        <ul class="picks">
          {turns.map((t) => (
            <li>
              <button aria-pressed={turn === t} onClick={() => setTurn(t)} data-turn-id={t.turnId}>
                <strong>{t.turnId || "session open"}</strong>
                <span class="muted">{t.traces.find((x) => x.queryText)?.queryText ?? MOMENT_WORDS[t.traces[0]?.moment ?? 0]}</span>
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <section class="turn" aria-label="Turn">
        {error && <p role="alert" class="error">{error}</p>}
        {turn ? <TurnDetail turn={turn} ceiling={props.ceiling} go={props.go} /> : <p class="muted">Pick a turn to see what the agent knew when it answered.</p>}
      </section>
    </div>
  );
}

function TurnDetail(props: { turn: InspectedTurn; ceiling: Ceiling; go: Navigate }) {
  const [surface, setSurface] = useState<Sensitivity>(props.ceiling);
  const [view, setView] = useState<RecallTraceView | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setView(null);
    if (!props.turn.turnId) return;
    memory.getTrace({ turnId: props.turn.turnId, viewingSurface: viewingSurface(surface) }).then(
      (r) => {
        setView(r.view ?? null);
        setError("");
      },
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  }, [props.turn, surface]);
  const question = props.turn.traces.find((x) => x.queryText)?.queryText;
  return (
    <>
      <h2>{props.turn.turnId ? `Turn ${props.turn.turnId}` : "Session open"}</h2>
      {question && (
        <p class="question" data-testid="question">
          Asked: <q>{question}</q>
        </p>
      )}
      {props.turn.turnId && (
        <section data-testid="user-view">
          <h3>What the agent knew when it answered</h3>
          <label>
            As shown on a surface that may show up to{" "}
            <select value={surface} onChange={(e) => setSurface(Number(e.currentTarget.value) as Sensitivity)}>
              <option value={Sensitivity.UNSPECIFIED}>the default</option>
              {[Sensitivity.PUBLIC, Sensitivity.PERSONAL, Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED].map((s) => (
                <option value={s}>{SENSITIVITY_WORDS[s]}</option>
              ))}
            </select>
          </label>
          {error && <p role="alert" class="error">{error}</p>}
          {view && (
            <>
              <p class="muted">
                From: {view.moments.map((m) => MOMENT_WORDS[m]).join(", ")}. {view.consideredNotShown} considered and not shown
                {view.withheldBySafety > 0 ? `, ${view.withheldBySafety} withheld by the safety pass` : ""}.
              </p>
              <ul class="known">
                {view.beliefs.map((b) => (
                  <li>
                    <button class="link" onClick={() => props.go.belief(b.beliefId)}>
                      {b.statement}
                    </button>{" "}
                    <span class={b.used ? "pill used" : "pill"}>{b.used ? "used in the answer" : "available"}</span>
                    <span class="muted">
                      {" "}
                      {trustLabel(b.confidenceBand, b.authority)}
                      {b.carried ? ` · learned in ${b.originScope}` : ""} · via {b.moments.map((m) => MOMENT_WORDS[m]).join(" and ")}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}
      <section>
        <h3>Full traces (for operators)</h3>
        {props.turn.traces.map((t) => (
          <OperatorTrace summary={t} turnId={props.turn.turnId} go={props.go} ceiling={props.ceiling} />
        ))}
      </section>
    </>
  );
}

function OperatorTrace(props: { summary: TraceSummary; turnId: string; go: Navigate; ceiling: Ceiling }) {
  const [open, setOpen] = useState(false);
  const [trace, setTrace] = useState<RecallTrace | null>(null);
  const [block, setBlock] = useState<GetRenderedBlockResponse | null>(null);
  const [explained, setExplained] = useState<ExplainTraceResponse | null>(null);
  const [error, setError] = useState("");
  const s = props.summary;
  useEffect(() => {
    if (!open || trace) return;
    const fail = (err: unknown) => setError(ConnectError.from(err).rawMessage);
    memory.getTrace({ traceId: s.traceId }).then((r) => setTrace(r.trace ?? null), fail);
    inspect.getRenderedBlock({ traceId: s.traceId }).then(setBlock, fail);
  }, [open]);
  // Under the page's ceiling: a candidate above it is counted, never named.
  useEffect(() => {
    if (!open) return;
    inspect.explainTrace({ traceId: s.traceId, viewingSurface: viewingSurface(props.ceiling) }).then(setExplained, (err: unknown) =>
      setError(ConnectError.from(err).rawMessage),
    );
  }, [open, props.ceiling]);
  return (
    <details class="trace" data-trace-id={s.traceId} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {MOMENT_WORDS[s.moment]}
        {s.tool ? ` (${s.tool})` : ""} · {s.returned} shown{s.blocked ? `, ${s.blocked} withheld` : ""} · {dateTime(s.createdAt)}
      </summary>
      {error && <p role="alert" class="error">{error}</p>}
      {trace && <TraceBody trace={trace} block={block} explained={explained} go={props.go} turnId={props.turnId} />}
    </details>
  );
}

function TraceBody(props: { trace: RecallTrace; block: GetRenderedBlockResponse | null; explained: ExplainTraceResponse | null; go: Navigate; turnId: string }) {
  const t = props.trace;
  const q = t.query;
  const latencies = Object.entries(t.armLatenciesMs);
  return (
    <div class="trace-body">
      <h4>The query, as formed</h4>
      <dl class="raw">
        <dt>text</dt>
        <dd>{q?.text ?? "—"}</dd>
        <dt>subjects</dt>
        <dd>{q?.subjects.join(", ") || "—"}</dd>
        <dt>project</dt>
        <dd>{q?.currentScope || "—"}</dd>
        <dt>surface</dt>
        <dd>
          {t.surfaceId || "—"}, up to {SENSITIVITY_WORDS[t.sensitivityCeiling]}
        </dd>
        <dt>policy</dt>
        <dd>{t.retrievalPolicyVersion}</dd>
      </dl>
      <h4>Arms</h4>
      {latencies.length === 0 ? (
        <p class="muted">Latencies expired with the operator fields (or a cached snapshot).</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>arm</th>
              <th>latency</th>
            </tr>
          </thead>
          <tbody>
            {latencies.map(([arm, ms]) => (
              <tr>
                <td>{arm}</td>
                <td>{ms} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {t.candidates ?? "?"} candidates after fusion: {t.returned.length - t.blocked.length} shown, {t.blocked.length} withheld by the
        safety pass, {t.consideredNotShown} considered and not shown, each with the reason its trace recorded. Floor{" "}
        {q?.minScore?.toFixed(2) ?? "?"}, at most {q?.maxItems ?? "?"} items in {q?.budgetTokens ?? "?"} tokens.
      </p>
      {props.explained && <Considered explained={props.explained} go={props.go} />}
      <h4>The block, byte for byte</h4>
      {props.block && (
        <>
          <p class={props.block.matchesTrace ? "ok" : "warn"} data-testid="block-check">
            {props.block.matchesTrace
              ? "Verified: these bytes hash to the trace's recorded sha256."
              : `Not verified: ${props.block.reason}.`}
          </p>
          <pre class="block" data-testid="rendered-block">{props.block.rendered}</pre>
          <p class="hash">
            sha256 <code data-testid="sha256">{t.renderedSha256}</code>
          </p>
        </>
      )}
      {t.returned.length > 0 && (
        <p>
          <button onClick={() => props.go.act({ traceId: t.id, returned: t.returned, turnId: props.turnId, scope: q?.currentScope ?? "" })}>Record what the model cited…</button>
        </p>
      )}
    </div>
  );
}

/** Every candidate of the recall and what became of it, in rank order, then those collapse removed. */
function Considered(props: { explained: ExplainTraceResponse; go: Navigate }) {
  const e = props.explained;
  const ranked = e.considered.filter((c) => !isCollapsed(c.outcome));
  const collapsed = e.considered.filter((c) => isCollapsed(c.outcome));
  const row = (c: ExplainTraceResponse["considered"][number], i: number | null) => (
    <tr data-belief-id={c.beliefId} data-outcome={CandidateOutcome[c.outcome].toLowerCase()}>
      <td>{i === null ? "–" : i + 1}</td>
      <td>
        <button class="link" onClick={() => props.go.belief(c.beliefId)}>
          [m:{shortId(c.beliefId)}]
        </button>{" "}
        {c.withheld ? "[withheld]" : c.statement}
      </td>
      {/* A withheld statement carries no score and no band: nothing of it is vouched for. */}
      <td>{c.withheld || i === null ? "—" : c.score.toFixed(3)}</td>
      <td>{c.arms.join(", ") || "—"}</td>
      <td>
        {OUTCOME_WORDS[c.outcome]}
        {c.confidenceBand ? `, ${BAND_WORDS[c.confidenceBand].toLowerCase()}` : ""}
      </td>
    </tr>
  );
  return (
    <>
      <h4>Ranked (score, arms, and why each was shown or not)</h4>
      {!e.reasonsRecorded && <p class="muted">This trace kept no reason per candidate (older, or past the operator window).</p>}
      <table data-testid="ranked">
        <thead>
          <tr>
            <th>#</th>
            <th>belief</th>
            <th>score</th>
            <th>arms</th>
            <th>outcome</th>
          </tr>
        </thead>
        <tbody>{ranked.map((c, i) => row(c, i))}</tbody>
      </table>
      {collapsed.length > 0 && (
        <>
          <h4>Collapsed before ranking into the block</h4>
          <table data-testid="collapsed">
            <tbody>{collapsed.map((c) => row(c, null))}</tbody>
          </table>
        </>
      )}
      {e.aboveCeiling > 0 && (
        <p class="muted" data-testid="above-ceiling">
          {e.aboveCeiling} candidate(s) above this view's sensitivity (or no longer stored) are not shown here.
        </p>
      )}
    </>
  );
}

function isCollapsed(o: CandidateOutcome): boolean {
  return o === CandidateOutcome.COLLAPSED_SUPERSEDED || o === CandidateOutcome.COLLAPSED_RESTATEMENT || o === CandidateOutcome.OVER_SUBJECT_CAP;
}

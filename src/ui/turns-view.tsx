import { ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import type { GetRenderedBlockResponse, InspectedSession, InspectedTurn, TraceSummary } from "../gen/memory/v1/inspect_service_pb.js";
import type { RecallTrace, RecallTraceView } from "../gen/memory/v1/types_pb.js";
import { Sensitivity } from "../gen/memory/v1/types_pb.js";
import { inspect, memory } from "./api.js";
import type { Navigate } from "./app.js";
import { viewingSurface, type Ceiling } from "./ceiling.js";
import { BAND_WORDS, MOMENT_WORDS, SENSITIVITY_WORDS, dateTime, shortId, trustLabel } from "./words.js";

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
  return (
    <>
      <h2>{props.turn.turnId ? `Turn ${props.turn.turnId}` : "Session open"}</h2>
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
          <OperatorTrace summary={t} turnId={props.turn.turnId} go={props.go} />
        ))}
      </section>
    </>
  );
}

function OperatorTrace(props: { summary: TraceSummary; turnId: string; go: Navigate }) {
  const [open, setOpen] = useState(false);
  const [trace, setTrace] = useState<RecallTrace | null>(null);
  const [block, setBlock] = useState<GetRenderedBlockResponse | null>(null);
  const [error, setError] = useState("");
  const s = props.summary;
  useEffect(() => {
    if (!open || trace) return;
    const fail = (err: unknown) => setError(ConnectError.from(err).rawMessage);
    memory.getTrace({ traceId: s.traceId }).then((r) => setTrace(r.trace ?? null), fail);
    inspect.getRenderedBlock({ traceId: s.traceId }).then(setBlock, fail);
  }, [open]);
  return (
    <details class="trace" data-trace-id={s.traceId} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {MOMENT_WORDS[s.moment]}
        {s.tool ? ` (${s.tool})` : ""} · {s.returned} shown{s.blocked ? `, ${s.blocked} withheld` : ""} · {dateTime(s.createdAt)}
      </summary>
      {error && <p role="alert" class="error">{error}</p>}
      {trace && <TraceBody trace={trace} block={block} go={props.go} turnId={props.turnId} />}
    </details>
  );
}

function TraceBody(props: { trace: RecallTrace; block: GetRenderedBlockResponse | null; go: Navigate; turnId: string }) {
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
        {t.candidates ?? "?"} candidates after fusion; {t.consideredNotShown} considered and not shown (collapsed, below the relevance
        floor, or over the budget); {t.droppedForBudgetCount} over the token budget; {t.blocked.length} withheld by the safety pass.
      </p>
      <h4>Ranked (score, arms)</h4>
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
        <tbody>
          {t.ranked.map((r, i) => (
            <tr>
              <td>{i + 1}</td>
              <td>
                <button class="link" onClick={() => props.go.belief(r.beliefId)}>
                  [m:{shortId(r.beliefId)}]
                </button>{" "}
                {r.blocked ? "[withheld]" : r.statement}
              </td>
              <td>{r.score.toFixed(3)}</td>
              <td>{r.arms.join(", ")}</td>
              <td>
                {t.blocked.includes(r.beliefId)
                  ? "withheld by safety"
                  : t.returned.includes(r.beliefId)
                    ? `shown, ${BAND_WORDS[r.confidenceBand].toLowerCase()}`
                    : t.droppedForBudget.includes(r.beliefId)
                      ? "over budget"
                      : "not shown: collapsed, below the floor, or already in the snapshot"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
          <button onClick={() => props.go.act({ traceId: t.id, returned: t.returned, turnId: props.turnId })}>Record what the model cited…</button>
        </p>
      )}
    </div>
  );
}

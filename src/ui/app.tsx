import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import type { GetPrincipalSummaryResponse } from "../gen/memory/v1/inspect_service_pb.js";
import { inspect, useBearer } from "./api.js";
import { ActionsView, type ActionTarget } from "./actions-view.js";
import { MemoryView } from "./memory-view.js";
import { TimelineView } from "./timeline-view.js";
import { TurnsView } from "./turns-view.js";
import { SENSITIVITY_WORDS, STATUS_WORDS } from "./words.js";
import { BeliefStatus, Sensitivity } from "../gen/memory/v1/types_pb.js";
import { viewingSurface, type Ceiling } from "./ceiling.js";

/** The page's shell: who is inspected, the four views, and the sign-in for the jwt mode. */

export type View = "memory" | "timeline" | "turns" | "actions";
const VIEWS: { id: View; label: string; hint: string }[] = [
  { id: "memory", label: "Memory", hint: "What the agent believes" },
  { id: "timeline", label: "Timeline", hint: "When it held, when it was learned" },
  { id: "turns", label: "Turns", hint: "What the agent saw in a turn, and why" },
  { id: "actions", label: "Actions", hint: "Correct it: reject, cite, erase" },
];

export interface Navigate {
  /** Open a belief in the Memory view. */
  belief(id: string): void;
  /** Open the Actions view aimed at a belief or a trace. */
  act(target: ActionTarget): void;
}

export function App() {
  const [summary, setSummary] = useState<GetPrincipalSummaryResponse | null>(null);
  const [problem, setProblem] = useState<{ signIn: boolean; message: string } | null>(null);
  const [view, setView] = useState<View>(initialView());
  const [beliefId, setBeliefId] = useState<string | null>(null);
  const [target, setTarget] = useState<ActionTarget>({});
  const [generation, setGeneration] = useState(0);
  const [ceiling, setCeiling] = useState<Ceiling>(Sensitivity.UNSPECIFIED);

  const load = () =>
    inspect.getPrincipalSummary({ viewingSurface: viewingSurface(ceiling) }).then(
      (s) => {
        setSummary(s);
        setProblem(null);
      },
      (err: unknown) => {
        const e = ConnectError.from(err);
        setProblem({ signIn: e.code === Code.Unauthenticated, message: e.rawMessage });
      },
    );
  useEffect(() => {
    void load();
  }, [generation, ceiling]);
  useEffect(() => {
    window.location.hash = view;
  }, [view]);

  const go: Navigate = {
    belief(id) {
      setBeliefId(id);
      setView("memory");
    },
    act(t) {
      setTarget(t);
      setView("actions");
    },
  };

  if (problem) return <SignIn problem={problem} onToken={(t) => (useBearer(t), setGeneration((g) => g + 1))} />;
  const changed = () => setGeneration((g) => g + 1);
  return (
    <div class="shell">
      <header class="top">
        <div class="who">
          <span class="brand">recall</span> memory of <strong data-testid="principal">{summary?.principalId ?? "…"}</strong>
          <span class="muted"> in {summary?.tenantId ?? "…"}</span>
        </div>
        <div class="counts muted" data-testid="counts">
          {summary && <Counts summary={summary} />}
        </div>
        <label class="ceiling">
          Show up to{" "}
          <select value={ceiling} onChange={(e) => setCeiling(Number(e.currentTarget.value) as Ceiling)} data-testid="ceiling">
            <option value={Sensitivity.UNSPECIFIED}>the default sensitivity</option>
            {[Sensitivity.PUBLIC, Sensitivity.PERSONAL, Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED].map((s) => (
              <option value={s}>{SENSITIVITY_WORDS[s]}</option>
            ))}
          </select>
        </label>
        <nav class="tabs" role="tablist" aria-label="Views">
          {VIEWS.map((v) => (
            <button
              role="tab"
              id={`tab-${v.id}`}
              aria-selected={view === v.id}
              aria-controls="view"
              title={v.hint}
              onClick={() => setView(v.id)}
              onKeyDown={(e) => arrowKeys(e, v.id, setView)}
            >
              {v.label}
            </button>
          ))}
        </nav>
      </header>
      <main id="view"><div role="tabpanel" aria-labelledby={`tab-${view}`}>
        {view === "memory" && <MemoryView key={generation} go={go} ceiling={ceiling} openId={beliefId} onOpen={setBeliefId} />}
        {view === "timeline" && <TimelineView key={generation} go={go} ceiling={ceiling} />}
        {view === "turns" && <TurnsView key={generation} go={go} ceiling={ceiling} />}
        {view === "actions" && (summary ? <ActionsView target={target} principal={summary} go={go} onChanged={changed} /> : <p class="loading">Loading…</p>)}
      </div>
      </main>
    </div>
  );
}

/** "10 current · 1 tentative · 2 sessions". */
function Counts(props: { summary: GetPrincipalSummaryResponse }) {
  const s = props.summary;
  const byStatus = Object.entries(s.beliefsByStatus).map(([status, n]) => `${n} ${STATUS_WORDS[statusOf(status)]}`);
  return (
    <>
      {byStatus.join(" · ") || "no beliefs"}
      {s.beliefsAboveCeiling > 0 ? ` · ${s.beliefsAboveCeiling} above this view's sensitivity` : ""}
      {` · ${s.sessions} sessions`}
    </>
  );
}

function statusOf(name: string): BeliefStatus {
  return ({ active: BeliefStatus.ACTIVE, provisional: BeliefStatus.PROVISIONAL, superseded: BeliefStatus.SUPERSEDED, expired: BeliefStatus.EXPIRED } as Record<string, BeliefStatus>)[name] ?? BeliefStatus.UNSPECIFIED;
}

function initialView(): View {
  const hash = window.location.hash.slice(1);
  return VIEWS.some((v) => v.id === hash) ? (hash as View) : "memory";
}

/** Left and right arrows move between the tabs, as in any tab list. */
function arrowKeys(e: KeyboardEvent, current: View, setView: (v: View) => void): void {
  if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
  const i = VIEWS.findIndex((v) => v.id === current);
  const next = VIEWS[(i + (e.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length]!;
  setView(next.id);
  document.getElementById(`tab-${next.id}`)?.focus();
}

function SignIn(props: { problem: { signIn: boolean; message: string }; onToken: (token: string) => void }) {
  const [token, setToken] = useState("");
  if (!props.problem.signIn) {
    return (
      <main class="plain">
        <h1>The sidecar did not answer</h1>
        <p role="alert">{props.problem.message}</p>
      </main>
    );
  }
  return (
    <main class="plain">
      <h1>Sign in to your memory</h1>
      <p>
        This sidecar verifies callers. Paste your bearer token (it stays in this tab's memory only), or, if the sidecar trusts
        local headers, open the address it printed at start.
      </p>
      <p class="muted">{props.problem.message}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.onToken(token.trim());
        }}
      >
        <label>
          Bearer token <input type="password" value={token} onInput={(e) => setToken(e.currentTarget.value)} autoComplete="off" />
        </label>
        <button type="submit">Open</button>
      </form>
    </main>
  );
}

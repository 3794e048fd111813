import { ConnectError } from "@connectrpc/connect";
import { useEffect, useRef, useState } from "preact/hooks";
import type { GetBeliefResponse, InspectedBelief } from "../gen/memory/v1/inspect_service_pb.js";
import type { RecalledBelief } from "../gen/memory/v1/types_pb.js";
import { Authority, BeliefStatus, Sensitivity } from "../gen/memory/v1/types_pb.js";
import { inspect, memory } from "./api.js";
import type { Navigate } from "./app.js";
import { BeliefCard } from "./belief-card.js";
import { viewingSurface, type Ceiling } from "./ceiling.js";
import { AUTHORITY_WORDS, BAND_WORDS, REJECTION_WORDS, SENSITIVITY_WORDS, STATUS_WORDS, date, dateTime, trustLabel } from "./words.js";

/** Memory: the principal's beliefs, searchable and filterable, one opened with its neighbours. */

interface Filters {
  statuses: BeliefStatus[];
  type: string;
  project: string;
  sensitivity: Sensitivity;
  authority: Authority;
}

const CURRENT = [BeliefStatus.ACTIVE, BeliefStatus.PROVISIONAL];
const STATUSES = [BeliefStatus.ACTIVE, BeliefStatus.PROVISIONAL, BeliefStatus.SUPERSEDED, BeliefStatus.EXPIRED];

export function MemoryView(props: { go: Navigate; ceiling: Ceiling; openId: string | null; onOpen: (id: string | null) => void }) {
  const [filters, setFilters] = useState<Filters>({ statuses: CURRENT, type: "", project: "", sensitivity: Sensitivity.UNSPECIFIED, authority: Authority.UNSPECIFIED });
  const [beliefs, setBeliefs] = useState<InspectedBelief[]>([]);
  // Null until the first page arrives: "Showing 0 of 0" would claim an empty memory.
  const [total, setTotal] = useState<number | null>(null);
  const [next, setNext] = useState("");
  const [error, setError] = useState("");
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<{ text: string; items: RecalledBelief[]; rendered: string } | null>(null);

  const request = (pageToken: string) => ({
    viewingSurface: viewingSurface(props.ceiling),
    statuses: filters.statuses,
    beliefTypes: filters.type.trim() ? [filters.type.trim()] : [],
    originScopes: filters.project.trim() ? [filters.project.trim()] : [],
    sensitivities: filters.sensitivity ? [filters.sensitivity] : [],
    authorities: filters.authority ? [filters.authority] : [],
    pageSize: 50,
    pageToken,
  });
  useEffect(() => {
    inspect.listBeliefs(request("")).then(
      (page) => {
        setBeliefs(page.beliefs);
        setTotal(page.total);
        setNext(page.nextPageToken);
        setError("");
      },
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  }, [filters, props.ceiling]);

  const more = () =>
    inspect.listBeliefs(request(next)).then((page) => {
      setBeliefs((shown) => [...shown, ...page.beliefs]);
      setNext(page.nextPageToken);
    });

  const search = (e: Event) => {
    e.preventDefault();
    if (!query.trim()) return setResults(null);
    memory.search({ text: query.trim(), maxItems: 20, surface: viewingSurface(props.ceiling) }).then(
      (r) => setResults({ text: query.trim(), items: r.result?.items ?? [], rendered: r.result?.rendered ?? "" }),
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  };
  const toggle = (s: BeliefStatus) =>
    setFilters((f) => ({ ...f, statuses: f.statuses.includes(s) ? f.statuses.filter((x) => x !== s) : [...f.statuses, s] }));

  return (
    <div class="split">
      <section class="list" aria-label="Beliefs">
        <form class="search" role="search" onSubmit={search}>
          <label for="search">Search memory</label>
          <input id="search" type="search" placeholder="e.g. what editor does Andy use" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          <button type="submit">Search</button>
        </form>
        {results && (
          <section class="results" aria-label="Search results" data-testid="search-results">
            <h2>
              Search: “{results.text}” <button class="link" onClick={() => setResults(null)}>clear</button>
            </h2>
            {results.items.length === 0 && <p class="muted">Nothing in memory answers this above the relevance floor.</p>}
            {results.items.map((item) => (
              <article class="belief" data-belief-id={item.beliefId}>
                <p class="statement">
                  {item.blocked ? (
                    <span class="warn">[withheld by the safety pass]</span>
                  ) : (
                    <button class="link" onClick={() => props.onOpen(item.beliefId)}>
                      {item.statement}
                    </button>
                  )}
                </p>
                {item.blocked ? (
                  // A withheld statement carries no trust label and no score: nothing of it is vouched for.
                  <p class="meta">
                    <span class="muted">about {item.subject} · the agent is shown a placeholder instead</span>
                  </p>
                ) : (
                  <p class="meta">
                    <span class="trust">{trustLabel(item.confidenceBand, item.authority)}</span>
                    <span class="pill">{STATUS_WORDS[item.status]}</span>
                    <span class="muted">about {item.subject} · score {item.score.toFixed(3)} · found by {item.arms.join(", ")}</span>
                  </p>
                )}
              </article>
            ))}
            <details>
              <summary>The block the agent would be given</summary>
              <pre class="block">{results.rendered}</pre>
            </details>
          </section>
        )}
        <fieldset class="filters">
          <legend>Filter</legend>
          <div class="checks">
            {STATUSES.map((s) => (
              <label>
                <input type="checkbox" checked={filters.statuses.includes(s)} onChange={() => toggle(s)} /> {STATUS_WORDS[s]}
              </label>
            ))}
          </div>
          <label>
            Type <input value={filters.type} placeholder="preference" onChange={(e) => setFilters({ ...filters, type: e.currentTarget.value })} />
          </label>
          <label>
            Project <input value={filters.project} placeholder="veetbot" onChange={(e) => setFilters({ ...filters, project: e.currentTarget.value })} />
          </label>
          <label>
            Sensitivity
            <select value={filters.sensitivity} onChange={(e) => setFilters({ ...filters, sensitivity: Number(e.currentTarget.value) as Sensitivity })}>
              <option value={Sensitivity.UNSPECIFIED}>any</option>
              {[Sensitivity.PUBLIC, Sensitivity.PERSONAL, Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED].map((s) => (
                <option value={s}>{SENSITIVITY_WORDS[s]}</option>
              ))}
            </select>
          </label>
          <label>
            Source
            <select value={filters.authority} onChange={(e) => setFilters({ ...filters, authority: Number(e.currentTarget.value) as Authority })}>
              <option value={Authority.UNSPECIFIED}>any</option>
              {[Authority.USER, Authority.AFFIRMED, Authority.INFERRED].map((a) => (
                <option value={a}>{AUTHORITY_WORDS[a]}</option>
              ))}
            </select>
          </label>
        </fieldset>
        {error && <p role="alert" class="error">{error}</p>}
        <p class="muted" data-testid="shown" aria-live="polite">
          {total === null ? (error ? "" : "Loading beliefs…") : `Showing ${beliefs.length} of ${total} beliefs, newest first.`}
        </p>
        {beliefs.map((b) => (
          <BeliefCard b={b} onOpen={props.onOpen} selected={b.belief!.beliefId === props.openId} />
        ))}
        {next && (
          <button class="more" onClick={more}>
            Show more
          </button>
        )}
      </section>
      {props.openId && <BeliefDetail id={props.openId} ceiling={props.ceiling} go={props.go} onClose={() => props.onOpen(null)} onOpen={props.onOpen} />}
    </div>
  );
}

/** One column (the stylesheet's breakpoint): the detail then sits above the list, out of sight of a card low in it. */
const ONE_COLUMN = "(max-width: 900px)";

/** Scrolls `element` to just below the sticky header. */
function scrollBelowHeader(element: Element): void {
  const header = document.querySelector(".top")?.getBoundingClientRect().height ?? 0;
  window.scrollTo({ top: element.getBoundingClientRect().top + window.scrollY - header - 8 });
}

function BeliefDetail(props: { id: string; ceiling: Ceiling; go: Navigate; onClose: () => void; onOpen: (id: string) => void }) {
  const [detail, setDetail] = useState<GetBeliefResponse | null>(null);
  const [error, setError] = useState("");
  const box = useRef<HTMLElement>(null);
  // In one column, bring the opened belief into view and move the focus to it; again once it has
  // loaded, as its content grows (the list below it would otherwise anchor the scroll position).
  const loaded = detail !== null;
  useEffect(() => {
    if (!box.current || !window.matchMedia(ONE_COLUMN).matches) return;
    scrollBelowHeader(box.current);
    box.current.focus({ preventScroll: true });
  }, [props.id, loaded]);
  // Closing returns to the card it was opened from.
  const close = () => {
    const id = props.id;
    props.onClose();
    // Once the detail is gone and the list has moved up.
    requestAnimationFrame(() => {
      const card = document.querySelector(`.list article[data-belief-id="${id}"]`);
      if (!card) return;
      if (window.matchMedia(ONE_COLUMN).matches) scrollBelowHeader(card);
      card.querySelector("button")?.focus({ preventScroll: true });
    });
  };
  useEffect(() => {
    setDetail(null);
    inspect.getBelief({ beliefId: props.id, viewingSurface: viewingSurface(props.ceiling) }).then(
      (d) => {
        setDetail(d);
        setError("");
      },
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  }, [props.id, props.ceiling]);
  const related = (title: string, list: InspectedBelief[], empty: string) => (
    <section>
      <h3>{title}</h3>
      {list.length === 0 ? <p class="muted">{empty}</p> : list.map((b) => <BeliefCard b={b} onOpen={props.onOpen} />)}
    </section>
  );
  return (
    <aside class="detail" aria-label="Belief" data-testid="belief-detail" ref={box} tabIndex={-1}>
      <p>
        <button class="link" onClick={close}>
          ← close
        </button>
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {detail && (
        <>
          <BeliefCard b={detail.belief!} />
          <p class="actions">
            <button onClick={() => props.go.act({ beliefId: props.id, statement: detail.belief!.belief!.statement, subject: detail.belief!.belief!.subject })}>
              This is wrong…
            </button>
          </p>
          {related("It replaced", detail.predecessors, "Nothing: it is the first of its kind.")}
          {related("Replaced by", detail.successors, "Nothing has replaced it.")}
          {related("In conflict with", detail.conflicts, "No open conflict.")}
          {detail.linkedAboveCeiling > 0 && (
            <p class="muted">{detail.linkedAboveCeiling} linked belief(s) are above this view's sensitivity and not shown.</p>
          )}
          <section>
            <h3>What you said about it</h3>
            {detail.rejections.length === 0 ? (
              <p class="muted">No rejection.</p>
            ) : (
              <ul>
                {detail.rejections.map((r) => (
                  <li>
                    {REJECTION_WORDS[r.kind]} — {dateTime(r.createdAt)}
                    {r.reason && <q> {r.reason}</q>}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section>
            <h3>Where it came from</h3>
            {detail.sourceEpisodes.length === 0 ? (
              <p class="muted">No source episode was recorded.</p>
            ) : (
              <ul>
                {detail.sourceEpisodes.map((e) => (
                  <li>
                    {date(e.occurredAt)}, session {e.sessionId}, {e.actor}: <q>{e.content}</q>
                  </li>
                ))}
              </ul>
            )}
            <p class="muted">
              Cited by the model {detail.citations} time(s); {BAND_WORDS[detail.belief!.confidenceBand].toLowerCase()}, usefulness{" "}
              {detail.belief!.utility.toFixed(2)}.
            </p>
          </section>
        </>
      )}
    </aside>
  );
}

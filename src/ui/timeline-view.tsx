import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { useEffect, useRef, useState } from "preact/hooks";
import type { InspectedBelief } from "../gen/memory/v1/inspect_service_pb.js";
import { BeliefStatus } from "../gen/memory/v1/types_pb.js";
import { inspect } from "./api.js";
import type { Navigate } from "./app.js";
import { viewingSurface, type Ceiling } from "./ceiling.js";
import { STATUS_WORDS, WITHHELD_WORDS } from "./words.js";

/**
 * Timeline: each belief as a bar over its valid time (when it held), with a
 * dot at its recorded time (when the agent learned it), and supersessions
 * drawn as links from the old bar to its successor. The "as of" cursor asks
 * the server what the memory held on that date as known on that date.
 */

const ROW = 30;
const PAD = { left: 8, right: 12, top: 28 };

const ms = (ts: { seconds: bigint; nanos: number } | undefined) => (ts ? Number(ts.seconds) * 1000 + ts.nanos / 1e6 : null);

export function TimelineView(props: { go: Navigate; ceiling: Ceiling }) {
  const [beliefs, setBeliefs] = useState<InspectedBelief[]>([]);
  const [next, setNext] = useState("");
  const [cursor, setCursor] = useState<string>("");
  const [heldThen, setHeldThen] = useState<Set<string> | null>(null);
  const [error, setError] = useState("");
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);

  const page = (token: string) =>
    inspect.listBeliefs({ viewingSurface: viewingSurface(props.ceiling), pageSize: 200, pageToken: token }).then((r) => {
      setBeliefs((b) => (token ? [...b, ...r.beliefs] : r.beliefs));
      setNext(r.nextPageToken);
    }, (err: unknown) => setError(ConnectError.from(err).rawMessage));
  useEffect(() => void page(""), [props.ceiling]);
  useEffect(() => {
    if (!box.current) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(320, Math.floor(entry!.contentRect.width))));
    observer.observe(box.current);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (!cursor) return setHeldThen(null);
    const at = timestampFromDate(new Date(`${cursor}T23:59:59Z`));
    inspect.listBeliefs({ viewingSurface: viewingSurface(props.ceiling), asOf: at, knownAt: at, pageSize: 200 }).then(
      (r) => setHeldThen(new Set(r.beliefs.map((b) => b.belief!.beliefId))),
      (err: unknown) => setError(ConnectError.from(err).rawMessage),
    );
  }, [cursor, props.ceiling]);

  // Rows: by subject, then by when each began to hold.
  const rows = [...beliefs].sort(
    (a, b) => a.belief!.subject.localeCompare(b.belief!.subject) || (ms(a.belief!.validFrom) ?? 0) - (ms(b.belief!.validFrom) ?? 0),
  );
  const now = Date.now();
  const times = rows.flatMap((b) => [ms(b.belief!.validFrom), ms(b.belief!.recordedAt), ms(b.belief!.validTo)]).filter((t): t is number => t !== null);
  const start = Math.min(now - 86_400_000 * 30, ...times);
  const end = Math.max(now, ...times);
  const x = (t: number) => PAD.left + ((t - start) / (end - start)) * (width - PAD.left - PAD.right);
  const y = (i: number) => PAD.top + i * ROW;
  const index = new Map(rows.map((b, i) => [b.belief!.beliefId, i]));
  const cursorX = cursor ? x(new Date(`${cursor}T23:59:59Z`).getTime()) : null;
  const height = PAD.top + rows.length * ROW + 8;

  return (
    <section aria-label="Timeline">
      <form class="cursor" onSubmit={(e) => e.preventDefault()}>
        <label>
          As of{" "}
          <input type="date" value={cursor} onInput={(e) => setCursor(e.currentTarget.value)} data-testid="as-of" />
        </label>
        {cursor && (
          <button type="button" class="link" onClick={() => setCursor("")}>
            clear
          </button>
        )}
        <span class="legend muted">
          <span class="key bar" /> held (valid time) <span class="key dot" /> learned (recorded time) <span class="key link-line" /> replaced by
        </span>
      </form>
      {heldThen && (
        <p data-testid="held-then">
          On {cursor}, as known then, the memory held {heldThen.size} belief(s); they are highlighted.
        </p>
      )}
      {error && <p role="alert" class="error">{error}</p>}
      <div class="timeline" ref={box}>
        <svg width={width} height={height} role="img" aria-label={`Timeline of ${rows.length} beliefs`}>
          {ticks(start, end).map((t) => (
            <g class="tick">
              <line x1={x(t)} x2={x(t)} y1={PAD.top - 10} y2={height} />
              <text x={x(t) + 3} y={PAD.top - 14}>
                {new Date(t).toISOString().slice(0, 7)}
              </text>
            </g>
          ))}
          {rows.map((b) => {
            const belief = b.belief!;
            const i = index.get(belief.beliefId)!;
            return belief.supersedes
              .filter((old) => index.has(old))
              .map((old) => {
                const from = index.get(old)!;
                const x0 = x(ms(belief.validFrom)!);
                return <path class="supersession" d={`M ${x0} ${y(from) + 20} C ${x0 - 20} ${y(from) + 26}, ${x0 - 20} ${y(i) + 14}, ${x0} ${y(i) + 20}`} />;
              });
          })}
          {rows.map((b, i) => {
            const belief = b.belief!;
            const x0 = x(ms(belief.validFrom)!);
            const x1 = x(ms(belief.validTo) ?? now);
            const dim = heldThen !== null && !heldThen.has(belief.beliefId);
            const status = BeliefStatus[b.statusNow].toLowerCase();
            const label = placeLabel(labelOf(b), x0, PAD.left, width - PAD.right);
            return (
              <g class={`row status-${status}${dim ? " dim" : ""}${heldThen?.has(belief.beliefId) ? " held" : ""}`} data-belief-id={belief.beliefId}>
                <title>{`${labelOf(b)} (${STATUS_WORDS[b.statusNow]})`}</title>
                <rect class="bar" x={x0} y={y(i) + 16} width={Math.max(3, x1 - x0)} height={8} rx={3} />
                <circle class="learned" cx={x(ms(belief.recordedAt)!)} cy={y(i) + 20} r={3.5} />
                <text x={label.x} y={y(i) + 11} class="label">
                  <a href="#memory" onClick={(e) => (e.preventDefault(), props.go.belief(belief.beliefId))}>
                    {label.text}
                  </a>
                </text>
              </g>
            );
          })}
          {cursorX !== null && <line class="cursor-line" x1={cursorX} x2={cursorX} y1={PAD.top - 10} y2={height} />}
        </svg>
      </div>
      {next && (
        <button class="more" onClick={() => page(next)}>
          Show more beliefs
        </button>
      )}
    </section>
  );
}

/** The statement, or why the safety pass keeps it from the agent (and from this page). */
function labelOf(b: InspectedBelief): string {
  return b.withheldBySafety ? `[withheld from the agent: ${WITHHELD_WORDS[b.withheldBySafety] ?? b.withheldBySafety}]` : b.belief!.statement;
}

/** The labels' font (app.css: .label), for measuring them before they are drawn. */
const LABEL_FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
let measurer: CanvasRenderingContext2D | null = null;

function textWidth(text: string): number {
  measurer ??= document.createElement("canvas").getContext("2d");
  if (!measurer) return text.length * 6.5;
  measurer.font = LABEL_FONT;
  return measurer.measureText(text).width;
}

/**
 * Where a bar's label goes so that none is cut off by the chart's edge: at
 * the bar's start when it fits there, else ending at the right edge, else
 * across the whole width, shortened with an ellipsis (the full text is the
 * row's tooltip and the belief's page).
 */
export function placeLabel(text: string, start: number, left: number, right: number): { x: number; text: string } {
  const w = textWidth(text);
  if (start + w <= right) return { x: start, text };
  if (left + w <= right) return { x: right - w, text };
  // The longest prefix that fits with its ellipsis, found by halving.
  let [lo, hi] = [1, text.length - 1];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(`${text.slice(0, mid)}…`) <= right - left) lo = mid;
    else hi = mid - 1;
  }
  return { x: left, text: `${text.slice(0, lo).trimEnd()}…` };
}

/** Month starts (or years, over a long span) between start and end. */
function ticks(start: number, end: number): number[] {
  const out: number[] = [];
  const d = new Date(start);
  d.setUTCDate(1);
  d.setUTCHours(0, 0, 0, 0);
  const months = (end - start) / (30 * 86_400_000);
  const step = months > 36 ? 12 : months > 12 ? 3 : 1;
  while (d.getTime() <= end) {
    if (d.getTime() >= start) out.push(d.getTime());
    d.setUTCMonth(d.getUTCMonth() + step);
  }
  return out;
}

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
            const status = BeliefStatus[belief.status].toLowerCase();
            return (
              <g class={`row status-${status}${dim ? " dim" : ""}${heldThen?.has(belief.beliefId) ? " held" : ""}`} data-belief-id={belief.beliefId}>
                <title>{`${labelOf(b)} (${STATUS_WORDS[belief.status]})`}</title>
                <rect class="bar" x={x0} y={y(i) + 16} width={Math.max(3, x1 - x0)} height={8} rx={3} />
                <circle class="learned" cx={x(ms(belief.recordedAt)!)} cy={y(i) + 20} r={3.5} />
                <text x={Math.min(x0, width - 200)} y={y(i) + 11} class="label">
                  <a href="#memory" onClick={(e) => (e.preventDefault(), props.go.belief(belief.beliefId))}>
                    {clip(labelOf(b), Math.floor(width / 7))}
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

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
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

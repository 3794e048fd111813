import { useState } from "preact/hooks";
import type { InspectedBelief } from "../gen/memory/v1/inspect_service_pb.js";
import { Authority, BeliefStatus, ConfidenceBand, Portability, ScopeLevel, Sensitivity } from "../gen/memory/v1/types_pb.js";
import { SENSITIVITY_WORDS, STATUS_WORDS, WITHHELD_WORDS, shortId, trustLabel, validity } from "./words.js";

/** One belief as a person reads it: the statement, the trust label in words, validity and links; raw values a click away. */
export function BeliefCard(props: { b: InspectedBelief; onOpen?: (id: string) => void; selected?: boolean }) {
  const { b } = props;
  const belief = b.belief!;
  // The status recall judges it by now: a successor in force replaces it even while its row says active.
  const status = STATUS_WORDS[b.statusNow];
  const replaced = b.statusNow === BeliefStatus.SUPERSEDED;
  const statement = b.withheldBySafety ? <span class="warn">[withheld from the agent: {WITHHELD_WORDS[b.withheldBySafety] ?? b.withheldBySafety}]</span> : belief.statement;
  return (
    <article class={`belief status-${BeliefStatus[b.statusNow].toLowerCase()}${props.selected ? " selected" : ""}`} data-belief-id={belief.beliefId}>
      <p class="statement">
        {props.onOpen ? (
          <button class="link" onClick={() => props.onOpen!(belief.beliefId)}>
            {statement}
          </button>
        ) : (
          statement
        )}
      </p>
      <p class="meta">
        <span class={`trust band-${ConfidenceBand[b.confidenceBand].toLowerCase()}`}>{trustLabel(b.confidenceBand, belief.authority)}</span>
        <span class="pill">{status}</span>
        <span class="muted">
          about {belief.subject} · {belief.beliefType.replace(/_/g, " ")} · learned in {belief.originScope} · {validity(belief.validFrom, belief.validTo)}
        </span>
      </p>
      <p class="links">
        {belief.supersedes.length > 0 && <span>replaced {belief.supersedes.length === 1 ? "an earlier belief" : `${belief.supersedes.length} earlier beliefs`} </span>}
        {b.supersededBy.length > 0 && replaced && <span class="warn">replaced by a newer belief </span>}
        {b.supersededBy.length > 0 && !replaced && <span class="muted">named as replaced by a belief not in force </span>}
        {belief.conflictsWith.length > 0 && <span class="warn">in open conflict with {belief.conflictsWith.length} </span>}
        {b.rejections > 0 && <span class="warn">rejected {b.rejections === 1 ? "once" : `${b.rejections} times`} </span>}
        {belief.flaggedForReview && <span class="warn">flagged for review </span>}
        {b.persona && <span class="muted">in the persona </span>}
      </p>
      <RawValues b={b} />
    </article>
  );
}

export function RawValues(props: { b: InspectedBelief }) {
  const [open, setOpen] = useState(false);
  const belief = props.b.belief!;
  return (
    <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Raw values</summary>
      {open && (
        <dl class="raw">
          <dt>belief_id</dt>
          <dd>
            <code>{belief.beliefId}</code> (<code>[m:{shortId(belief.beliefId)}]</code> in a block)
          </dd>
          <dt>confidence</dt>
          <dd>
            {belief.confidence} → CONFIDENCE_BAND_{ConfidenceBand[props.b.confidenceBand]}
          </dd>
          <dt>authority</dt>
          <dd>AUTHORITY_{Authority[belief.authority]}</dd>
          <dt>status</dt>
          <dd>
            BELIEF_STATUS_{BeliefStatus[belief.status]}
            {props.b.statusNow !== belief.status && <> as stored; BELIEF_STATUS_{BeliefStatus[props.b.statusNow]} now (a successor is in force)</>}
          </dd>
          <dt>scope</dt>
          <dd>
            {belief.originScope}, SCOPE_LEVEL_{ScopeLevel[belief.scopeLevel]}, PORTABILITY_{Portability[belief.portability]}
          </dd>
          <dt>sensitivity</dt>
          <dd>
            {SENSITIVITY_WORDS[belief.sensitivity]} (SENSITIVITY_{Sensitivity[belief.sensitivity]})
          </dd>
          <dt>evidence</dt>
          <dd>{belief.evidenceCount} observation(s)</dd>
          <dt>utility</dt>
          <dd>{props.b.utility.toFixed(3)}</dd>
          <dt>predicate_key</dt>
          <dd>{belief.predicateKey || "—"}</dd>
          <dt>store_position</dt>
          <dd>{String(props.b.storePosition)}</dd>
        </dl>
      )}
    </details>
  );
}

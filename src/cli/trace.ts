import { toJson } from "@bufbuild/protobuf";
import type { Config } from "../config/config.js";
import { InvalidArgumentError, NotFoundError } from "../domain/errors.js";
import { SENSITIVITY, type SurfaceContext } from "../domain/model.js";
import { RecallTraceSchema, RecallTraceViewSchema } from "../gen/memory/v1/types_pb.js";
import { recallTraceToProto, recallTraceViewToProto } from "../server/wire/convert.js";
import * as validate from "../server/wire/validate.js";
import { traceView } from "../trace/trace-view.js";
import { UsageError } from "./usage-error.js";
import { PRINCIPAL_OPTIONS, parseArgs, principalFrom, withStore } from "./store-command.js";

/**
 * `recall trace TRACE_ID`: the principal's persisted trace as JSON, exactly
 * what GetTrace's operator form returns. `recall trace --view TURN_ID`: the
 * user view of a turn, as GetTrace's user form returns it. Same scoping as
 * the RPC: another principal's trace or turn gets the same not-found error
 * as a missing one.
 */
export async function runTrace(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...PRINCIPAL_OPTIONS, view: { type: "string" }, surface: { type: "string" }, ceiling: { type: "string" } },
  });
  const principal = principalFrom(values);
  const traceId = positionals[0];
  if ((values.view === undefined) === (traceId === undefined) || positionals.length > 1) {
    throw new UsageError("give one TRACE_ID or --view TURN_ID");
  }
  if (!principal) throw new UsageError("--tenant and --principal are required");
  const viewing = values.view === undefined ? null : viewingSurface(values.surface, values.ceiling, config);
  if (viewing instanceof InvalidArgumentError) {
    process.stderr.write(`recall trace: ${viewing.message}\n`);
    return 2;
  }
  // A malformed id is refused before the store is opened.
  let id: string;
  try {
    id = traceId === undefined ? "" : validate.uuid(traceId, "trace_id");
  } catch (error) {
    process.stderr.write(`recall trace: ${(error as Error).message}\n`);
    return 2;
  }
  return withStore(config, "trace", async (store, out) => {
    if (values.view !== undefined && viewing) {
      const turnId = values.view.slice(0, validate.MAX_CONTEXT_ID);
      const view = await traceView(store.traces, principal, turnId, viewing.sensitivityCeiling);
      if (!view) throw new NotFoundError("no trace for this turn");
      out(`${JSON.stringify(toJson(RecallTraceViewSchema, recallTraceViewToProto(view), { alwaysEmitImplicit: true }), null, 2)}\n`);
      return 0;
    }
    const trace = await store.getTrace(principal, id);
    if (!trace) throw new NotFoundError("trace not found");
    out(`${JSON.stringify(toJson(RecallTraceSchema, recallTraceToProto(trace), { alwaysEmitImplicit: true }), null, 2)}\n`);
    return 0;
  });
}

/**
 * `--surface` names a ceiling (public, personal, confidential, restricted) or
 * a surface id; `--ceiling` sets the ceiling explicitly. Unset: the
 * configured default ceiling, as for a request whose surface has none.
 */
export function viewingSurface(surface: string | undefined, ceiling: string | undefined, config: Pick<Config, "defaultSensitivityCeiling">): SurfaceContext | InvalidArgumentError {
  const isCeiling = (s: string | undefined): s is keyof typeof SENSITIVITY => s !== undefined && Object.hasOwn(SENSITIVITY, s);
  if (ceiling !== undefined && !isCeiling(ceiling)) {
    return new InvalidArgumentError("--ceiling", `must be one of ${Object.keys(SENSITIVITY).join(", ")}`);
  }
  const named = isCeiling(surface) ? surface : undefined;
  return {
    surfaceId: named === undefined ? (surface ?? "") : "",
    sensitivityCeiling: SENSITIVITY[ceiling ?? named ?? config.defaultSensitivityCeiling],
  };
}

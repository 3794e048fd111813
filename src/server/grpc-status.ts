import { Code } from "@connectrpc/connect";

/**
 * The canonical gRPC status names (OK, INVALID_ARGUMENT, …), as gRPC's own
 * documentation, OpenTelemetry's `rpc.response.status_code` and operators'
 * alerts spell them; connect-es's enum spells them InvalidArgument, Canceled.
 */
export function statusName(code: Code | undefined): string {
  if (code === undefined) return "OK";
  if (code === Code.Canceled) return "CANCELLED";
  const name = Code[code];
  return name === undefined ? `CODE_${code}` : name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** Failures of the server or what it depends on, not of the request: logged at warn or error, spans marked as errors. */
const SERVER_FAILURES: Partial<Record<Code, "warn" | "error">> = {
  [Code.Internal]: "error",
  [Code.Unknown]: "error",
  [Code.DataLoss]: "error",
  [Code.Unavailable]: "warn",
  [Code.DeadlineExceeded]: "warn",
  [Code.ResourceExhausted]: "warn",
};

/** The log level of a call that ended with `code`: info for success and for what the caller got wrong. */
export function callLogLevel(code: Code | undefined): "info" | "warn" | "error" {
  return code === undefined ? "info" : (SERVER_FAILURES[code] ?? "info");
}

import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { InspectService } from "../gen/memory/v1/inspect_service_pb.js";
import { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";

/**
 * The page's only way to the sidecar: its own RPCs, through Connect on the
 * same origin. In the trusted-headers mode the session cookie (HttpOnly, set
 * at login) names the principal; in the jwt mode the user's bearer token is
 * sent, kept in this module's memory only (never in the browser's storage).
 */

let bearer: string | null = null;

export function useBearer(token: string | null): void {
  bearer = token;
}

const auth: Interceptor = (next) => (req) => {
  if (bearer) req.header.set("authorization", `Bearer ${bearer}`);
  return next(req);
};

const transport = createConnectTransport({
  baseUrl: window.location.origin,
  useBinaryFormat: true,
  interceptors: [auth],
  // Cookies go with same-origin calls only; memory is never cached (the server says no-store too).
  fetch: (input, init) => fetch(input, { ...init, credentials: "same-origin", cache: "no-store" }),
});

export const inspect: Client<typeof InspectService> = createClient(InspectService, transport);
export const memory: Client<typeof MemoryService> = createClient(MemoryService, transport);
export const write: Client<typeof MemoryWriteService> = createClient(MemoryWriteService, transport);

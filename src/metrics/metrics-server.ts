import * as http from "node:http";
import type { Registry } from "prom-client";
import { metricsEndpoint } from "../server/metrics.js";
import { StartupError } from "../domain/startup-error.js";

/** GET /metrics on a port of its own (RECALL_METRICS_PORT), e.g. one only the scraper can reach. */
export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(metricsEndpoint(registry));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const cause = error.code === "EADDRINUSE" ? "the port is already in use" : (error.code ?? error.message);
      reject(new StartupError(`cannot serve metrics on ${host}:${port}: ${cause} (RECALL_METRICS_PORT=${port})`));
    });
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

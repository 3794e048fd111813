import type { Registry } from "prom-client";

/**
 * GET /metrics in the Prometheus text format, from the sidecar's registry
 * (src/metrics/): served on the RPC port (over HTTP/1.1 or HTTP/2) as the
 * adapter's fallback, and on RECALL_METRICS_PORT when that is set.
 */
export function metricsEndpoint(registry: Registry) {
  // Structural types: connect-node hands over HTTP/1.1 and HTTP/2 objects alike.
  return (
    req: { method?: string; url?: string },
    res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown },
  ) => {
    if (req.method === "GET" && (req.url === "/metrics" || req.url?.startsWith("/metrics?"))) {
      registry.metrics().then(
        (body) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(body);
        },
        (error: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`);
        },
      );
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  };
}

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Config } from "../config/config.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../gen/grpc/health/v1/health_pb.js";

/**
 * `recall health`: calls grpc.health.v1 Check on the configured listener and
 * exits 0 only when the sidecar answers SERVING. Used by the Dockerfile's
 * HEALTHCHECK and usable as an exec probe.
 */
export async function runHealth(config: Config): Promise<number> {
  // A wildcard listen address is reached through loopback.
  const host = ["0.0.0.0", "::", ""].includes(config.listen.host) ? "127.0.0.1" : config.listen.host;
  const scheme = config.tls ? "https" : "http";
  const baseUrl = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${config.listen.port}`;
  // With TLS the probe dials loopback, which the certificate need not name; it sends nothing secret.
  const client = createClient(Health, createGrpcTransport({ baseUrl, ...(config.tls ? { nodeOptions: { rejectUnauthorized: false } } : {}) }));
  try {
    const { status } = await client.check({ service: "" }, { timeoutMs: 2000 });
    process.stdout.write(`${ServingStatus[status]}\n`);
    return status === ServingStatus.SERVING ? 0 : 1;
  } catch (error) {
    process.stderr.write(`recall health: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

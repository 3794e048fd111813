import type { Tracer } from "@opentelemetry/api";

/**
 * OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * then the SDK is loaded (imported here, never otherwise), a tracer provider
 * with a batching OTLP/HTTP (JSON) exporter is registered globally (with
 * AsyncLocalStorage context and the W3C trace-context propagator), and its
 * tracer returned. The exporter reads the rest of its own OTEL_* variables
 * (headers, timeouts, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_BSP_*).
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** The span helpers: they import OpenTelemetry's API, so they too are loaded only with tracing on. */
  readonly spans: typeof import("./rpc-spans.js") & typeof import("./recall-spans.js");
  /** Flushes the spans still queued and stops exporting. */
  shutdown(): Promise<void>;
}

export async function startTracing(options: { serviceName: string }): Promise<Tracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, rpcSpans, recallSpans] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("./rpc-spans.js"),
    import("./recall-spans.js"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return { tracer: provider.getTracer("recall"), spans: { ...rpcSpans, ...recallSpans }, shutdown: () => provider.shutdown() };
}

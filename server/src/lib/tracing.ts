/**
 * OpenTelemetry traces, opt-in (docs/operations.md, Traces): with `OTEL_EXPORTER_OTLP_ENDPOINT` set, every request
 * is a span (`@fastify/otel`: the request, its hooks and its handler) exported in batches over OTLP/HTTP (JSON) to
 * `{endpoint}/v1/traces`, with the resource's `service.name` from `OTEL_SERVICE_NAME` and `service.version` from
 * package.json. An incoming `traceparent` header continues the caller's trace. URLs are recorded with the values of
 * `token=` and other secret-named query parameters redacted, as in the access log. Without the variable nothing of
 * OpenTelemetry is loaded.
 */
import type { FastifyPluginCallback } from 'fastify';
import { redactUrl } from '../http/logging.ts';

export interface Tracing {
  /** The Fastify plugin that makes the spans; register it before the routes. */
  plugin: FastifyPluginCallback;
  /** Export the spans finished so far (tests, shutdown). */
  flush(): Promise<void>;
  /** Flush and stop exporting. */
  shutdown(): Promise<void>;
}

/**
 * The tracer provider and the Fastify instrumentation for `endpoint`, or undefined without one. The provider is
 * registered as the process's global one (context propagation across async calls needs its context manager).
 */
export async function createTracing(opts: {
  endpoint: string | undefined;
  serviceName: string;
  serviceVersion: string;
}): Promise<Tracing | undefined> {
  if (!opts.endpoint) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, otel] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@fastify/otel'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.serviceVersion }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, '')}/v1/traces` })),
    ],
  });
  provider.register();
  const instrumentation = new otel.FastifyOtelInstrumentation({
    // The probes and the metrics scrape are not traced.
    ignorePaths: (r) => r.url === '/healthz' || r.url === '/readyz' || r.url === '/metrics',
    requestHook: (span, request) => span.setAttribute('url.path', redactUrl(request.url)),
  });
  instrumentation.setTracerProvider(provider);
  return {
    plugin: instrumentation.plugin() as FastifyPluginCallback,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

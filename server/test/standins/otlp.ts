/**
 * A local stand-in of an OpenTelemetry collector's OTLP/HTTP trace receiver: `POST /v1/traces` with a JSON
 * `ExportTraceServiceRequest` (what `@opentelemetry/exporter-trace-otlp-http` sends by default) answers 200 `{}`;
 * every span received is kept with its resource attributes, flattened for the test to read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  name: string;
  traceId: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  resource: Record<string, string | number | boolean | undefined>;
}

const flat = (kvs: KeyValue[] = []) =>
  Object.fromEntries(
    kvs.map((kv) => [
      kv.key,
      kv.value.stringValue ??
        (kv.value.intValue !== undefined ? Number(kv.value.intValue) : undefined) ??
        kv.value.boolValue ??
        kv.value.doubleValue,
    ]),
  );

export async function startOtlpStandIn() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{
            spans?: Array<{ name: string; traceId: string; kind: number; attributes?: KeyValue[] }>;
          }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = flat(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({ name: s.name, traceId: s.traceId, kind: s.kind, attributes: flat(s.attributes), resource });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

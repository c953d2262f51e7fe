/**
 * Observability through the real app: `/metrics` behind METRICS_TOKEN is scraped after a worker's run (requests by
 * route, runs by status and duration, model calls and tokens by model and payer, queue depth, the database pool),
 * and the opt-in traces reach a local OTLP/HTTP receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startOtlpStandIn } from '../../../test/standins/otlp.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';

const TOKEN = 'metrics-token-0123456789';
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let otlp: Awaited<ReturnType<typeof startOtlpStandIn>>;
let t: TestApp;

beforeAll(async () => {
  llm = await startLlmStandIn();
  otlp = await startOtlpStandIn();
  t = await buildTestApp({
    env: {
      LLM_BASE_URL: llm.anthropicUrl,
      METRICS_TOKEN: TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_SERVICE_NAME: 'crm-test',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
  await otlp?.close();
});

/** The value of one sample line `name{labels} value` of the exposition text, or undefined. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('metrics', () => {
  it('asks for the metrics token', async () => {
    const none = await api(t.app, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_metrics_token');
    const wrong = await api(t.app, 'GET', '/metrics', { token: 'another-token-0123456789' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain('another-token');
  });

  it('counts requests by route, runs by status and duration, model calls and tokens by model and payer', async () => {
    const u = await createUser(t);
    const p = await createProject(t, u.id);
    await giveKey(t, u.id);
    const w = await createWorker(t, p.id, { model: 'claude-sonnet-4-6' });
    llm.enqueue({ content: [{ type: 'text', text: 'Hello.' }], usage: { input_tokens: 120, output_tokens: 8 } });
    const sent = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'Say hello' },
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    expect(sent.status).toBe(202);
    const run = await waitRun(t, p.name, sent.body.run_ids[0], u.token);
    expect(run.status).toBe('succeeded');

    const res = await api(t.app, 'GET', '/metrics', { token: TOKEN });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = res.text;
    expect(
      sample(
        m,
        'crm_http_request_duration_seconds_count{method="POST",route="/api/crm/projects/:name/message",status="202"}',
      ),
    ).toBe(1);
    expect(sample(m, 'crm_runs{status="succeeded"}')).toBe(1);
    expect(sample(m, 'crm_run_duration_seconds_count{status="succeeded"}')).toBe(1);
    expect(sample(m, 'crm_model_calls_total{model="claude-sonnet-4-6",payer="own",source="worker"}')).toBe(1);
    expect(sample(m, 'crm_model_tokens_total{model="claude-sonnet-4-6",payer="own",kind="input"}')).toBe(120);
    expect(sample(m, 'crm_model_tokens_total{model="claude-sonnet-4-6",payer="own",kind="output"}')).toBe(8);
    expect(sample(m, 'crm_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'crm_db_pool_waiting')).toBeGreaterThanOrEqual(0);
    expect(m).toContain('# TYPE crm_job_queue_depth gauge');
    expect(m).toContain('# TYPE crm_job_failures_total counter');
    expect(m).toContain('process_resident_memory_bytes');
    // No secret reaches the metrics.
    expect(m).not.toContain('sk-user-test-key');
  });
});

describe('traces', () => {
  it('exports a span per request to the OTLP receiver, continuing the caller’s trace, with tokens redacted', async () => {
    await api(t.app, 'GET', '/api/crm/docs/tree?lang=en&token=secret-in-the-query');
    const tracing = await t.deps.tracing;
    await tracing!.flush();
    const request = otlp.spans.filter((s) => s.name === 'request');
    const message = request.find((s) => s.attributes['http.route'] === '/api/crm/projects/:name/message');
    expect(message, JSON.stringify(otlp.spans.map((s) => s.attributes))).toBeDefined();
    expect(message!.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(message!.resource['service.name']).toBe('crm-test');
    expect(message!.attributes['http.request.method']).toBe('POST');
    const docs = request.find((s) => s.attributes['http.route'] === '/api/crm/docs/tree');
    expect(docs!.attributes['url.path']).toBe('/api/crm/docs/tree?lang=en&token=[redacted]');
    expect(JSON.stringify(otlp.spans)).not.toContain('secret-in-the-query');
    // The probes and the scrape are not traced.
    expect(request.some((s) => s.attributes['http.route'] === '/metrics')).toBe(false);
  });
});

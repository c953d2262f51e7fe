import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';
import CliLink from '../CliLink';
import Billing from './Billing';
import Cloud from './Cloud';

function renderAt(path: string, element: React.ReactNode, url: string) {
  const router = createMemoryRouter([{ path, element }], { initialEntries: [url] });
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider>
        <RouterProvider router={router} />
      </I18nProvider>
    </QueryClientProvider>,
  );
}

/** The service's answers by "METHOD path" (the pages talk to it through fetch). */
function serve(answers: Record<string, [number, unknown]>) {
  const calls: { call: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', async (input: Request | string) => {
    const req = typeof input === 'string' ? new Request(new URL(input, 'http://app.test')) : input;
    const call = `${req.method} ${new URL(req.url).pathname}`;
    const text = req.method === 'GET' ? '' : await req.clone().text();
    calls.push({ call, body: text ? JSON.parse(text) : null });
    const [status, body] = answers[call] ?? [404, { error: 'not_found', message: 'Not found.' }];
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return calls;
}

const STATUS = {
  plan: 'free',
  status: 'none',
  current_period_end: null,
  next_billing_date: null,
  payprov_masked_pan: null,
  billing_failures: 0,
  limits: { projects: 1, workers: 3, daily_tokens_per_worker: 100000 },
  usage: { projects: 1, workers: 2, tokens_this_month: 1234 },
  features: { cloud_container: false, own_llm_key: true, unmetered: false, plan_limit_bypass: false },
  pricing: {
    currency: 'UAH',
    plans: [
      { plan: 'min', amount_uah: 200, limits: { projects: 3, workers: 10 } },
      { plan: 'cloud', amount_uah: 900, limits: { projects: 10, workers: 30 } },
    ],
  },
  can_upgrade: true,
  upgrades: ['min', 'cloud'],
  payprov_ready: true,
};
const SUMMARY = {
  service: {
    plan: 'free',
    status: 'none',
    tokens_this_month: 0,
    tokens_input: 0,
    tokens_output: 0,
    renewal_date: null,
  },
  llm_provider: {
    connected: true,
    key_source: 'platform',
    key_prefix: null,
    credit_balance_usd: null,
    spend_month_usd: null,
    tokens_this_week: 0,
  },
};
const ME = { id: 7, email: 'ann@example.com', chat_id: '7', plan: 'free', role: 'user' };

beforeEach(() => localStorage.setItem('crm.token', 'test-token'));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('plan and payment tab', () => {
  it('buys a plan on the hosted invoice with the return address of this tab', async () => {
    const calls = serve({
      'GET /api/crm/billing/status': [200, STATUS],
      'GET /api/crm/account/billing-summary': [200, SUMMARY],
      'POST /api/crm/billing/checkout-session': [
        200,
        { url: 'https://pay.example/inv/1', invoice_id: 'inv1', plan: 'cloud', amount_uah: 900 },
      ],
    });
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderAt('/account', <Billing />, '/account?tab=billing');
    fireEvent.click(await screen.findByRole('button', { name: 'Buy cloud' }));
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('https://pay.example/inv/1'));
    expect(calls.find((c) => c.call === 'POST /api/crm/billing/checkout-session')?.body).toEqual({
      plan: 'cloud',
      success_url: '/account?tab=billing&checkout=cloud',
      cancel_url: '/account?tab=billing',
    });
  });

  it('says plainly when payments are not configured', async () => {
    serve({
      'GET /api/crm/billing/status': [200, { ...STATUS, payprov_ready: false }],
      'GET /api/crm/account/billing-summary': [200, SUMMARY],
    });
    renderAt('/account', <Billing />, '/account?tab=billing');
    expect((await screen.findByText(/Payments are not available/)).textContent).toMatch(/not available/);
    expect((screen.getByRole('button', { name: 'Buy min' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('after the return from the provider shows the new plan once the status has it', async () => {
    let n = 0;
    serve({
      'GET /api/crm/account/billing-summary': [200, SUMMARY],
      'GET /api/auth/me': [200, ME],
    });
    const answers = globalThis.fetch;
    vi.stubGlobal('fetch', async (input: Request) => {
      if (new URL(input.url).pathname === '/api/crm/billing/status')
        return new Response(JSON.stringify({ ...STATUS, plan: n++ === 0 ? 'free' : 'min', upgrades: ['cloud'] }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      return answers(input);
    });
    renderAt('/account', <Billing />, '/account?tab=billing&checkout=min');
    expect((await screen.findByText('Checking your payment…')).textContent).toBeTruthy();
    expect(await screen.findByText(/your plan is now min/, {}, { timeout: 5000 })).toBeTruthy();
  });
});

describe('cloud tab', () => {
  it('without the cloud plan: "Create my container" is not offered (disabled, the plan named); the waitlist can be joined', async () => {
    const calls = serve({
      'GET /api/auth/me': [200, ME],
      'GET /api/crm/billing/status': [200, STATUS],
      'GET /api/crm/cloud/status': [200, { status: 'none' }],
      'GET /api/crm/cloud/waitlist/status': [200, { status: 'not_joined' }],
      'POST /api/crm/cloud/provision': [
        402,
        { error: 'cloud_plan_required', message: 'A cloud container needs the cloud plan.' },
      ],
      'POST /api/crm/cloud/waitlist': [
        200,
        { position: 3, status: 'waiting', joined_at: '2026-11-23T10:00:00Z', message: 'ok' },
      ],
    });
    renderAt('/account', <Cloud />, '/account?tab=cloud');
    const create = await screen.findByRole('button', { name: 'Create my container' });
    expect((create as HTMLButtonElement).disabled).toBe(true);
    expect(create.getAttribute('aria-describedby')).toBe('cloud-plan-needed');
    expect(document.getElementById('cloud-plan-needed')?.textContent).toBe('A cloud container needs the cloud plan.');
    expect(calls.some((c) => c.call === 'POST /api/crm/cloud/provision')).toBe(false);
    fireEvent.click(await screen.findByRole('button', { name: 'Join the cloud waitlist' }));
    await vi.waitFor(() => expect(calls.some((c) => c.call === 'POST /api/crm/cloud/waitlist')).toBe(true));
  });

  it('a ready container offers the terminal, the log and removal with a confirmation', async () => {
    const calls = serve({
      'GET /api/auth/me': [200, { ...ME, plan: 'cloud' }],
      'GET /api/crm/billing/status': [
        200,
        { ...STATUS, plan: 'cloud', features: { ...STATUS.features, cloud_container: true } },
      ],
      'GET /api/crm/cloud/status': [
        200,
        { status: 'ready', container_id: 'c1', docker_running: true, agent_authed: false, codehost_authed: false },
      ],
      'POST /api/crm/cloud/deprovision': [200, { ok: true, container_id: 'c1' }],
    });
    renderAt('/account', <Cloud />, '/account?tab=cloud');
    expect(await screen.findByRole('button', { name: 'Open the terminal' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Show the log' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Create my container' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Remove the container' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Yes, remove it' }));
    await vi.waitFor(() => expect(calls.some((c) => c.call === 'POST /api/crm/cloud/deprovision')).toBe(true));
  });
  it('follows the log stream of the container as the user, until it closes', async () => {
    serve({
      'GET /api/auth/me': [200, { ...ME, plan: 'cloud' }],
      'GET /api/crm/billing/status': [
        200,
        { ...STATUS, plan: 'cloud', features: { ...STATUS.features, cloud_container: true } },
      ],
      'GET /api/crm/cloud/status': [200, { status: 'paused', container_id: 'c1' }],
    });
    const streams: { url: string; onmessage: ((e: { data: string }) => void) | null; closed: boolean }[] = [];
    vi.stubGlobal(
      'EventSource',
      class {
        onmessage: ((e: { data: string }) => void) | null = null;
        onerror: (() => void) | null = null;
        closed = false;
        constructor(readonly url: string) {
          streams.push(this);
        }
        close() {
          this.closed = true;
        }
      },
    );
    renderAt('/account', <Cloud />, '/account?tab=cloud');
    expect((await screen.findByTestId('cloud-status')).textContent).toBe('Paused (resumes when you connect)');
    fireEvent.click(screen.getByRole('button', { name: 'Show the log' }));
    await vi.waitFor(() => expect(streams).toHaveLength(1));
    expect(streams[0]!.url).toBe('/api/sse/cloud/7/logs?token=test-token');
    act(() => streams[0]!.onmessage?.({ data: JSON.stringify({ line: 'container started' }) }));
    act(() => streams[0]!.onmessage?.({ data: JSON.stringify({ line: '$ ls' }) }));
    expect(screen.getByLabelText('Container log').textContent).toBe('container started\n$ ls');
    act(() => streams[0]!.onmessage?.({ data: JSON.stringify({ closed: true }) }));
    expect(screen.getByText('The container was removed; the log has ended.')).toBeTruthy();
    expect(streams[0]!.closed).toBe(true);
  });
});

describe('CLI link page', () => {
  it('confirms the code and shows an expired code clearly', async () => {
    const calls = serve({
      'GET /api/auth/me': [200, ME],
      'POST /api/crm/cli/link/confirm': [410, { error: 'link_expired', message: 'This code has expired.' }],
    });
    renderAt('/cli/link', <CliLink />, '/cli/link?code=AB12CD');
    fireEvent.click(await screen.findByRole('button', { name: 'Yes, link this device' }));
    expect(await screen.findByText('This code has expired. Run arc login again.')).toBeTruthy();
    expect(calls.find((c) => c.call === 'POST /api/crm/cli/link/confirm')?.body).toEqual({ code: 'AB12CD' });
  });

  it('shows success', async () => {
    serve({ 'GET /api/auth/me': [200, ME], 'POST /api/crm/cli/link/confirm': [200, { ok: true }] });
    renderAt('/cli/link', <CliLink />, '/cli/link?code=AB12CD');
    fireEvent.click(await screen.findByRole('button', { name: 'Yes, link this device' }));
    expect(await screen.findByText(/The CLI is linked/)).toBeTruthy();
  });
});

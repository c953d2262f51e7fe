import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';
import Secrets from './Secrets';

const item = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  label: `${name} label`,
  description: `${name} description`,
  testable: true,
  restartTargets: [],
  set: false,
  preview: null,
  length: 0,
  lastRotated: null,
  lastRotatedBy: null,
  category: 'email',
  usedIn: ['transactional e-mail'],
  getFromUrl: 'https://vendor.example/keys',
  effectAfterRotate: 'The next e-mail uses it.',
  riskIfLeaked: 'Anyone can send e-mail.',
  ...over,
});

/** A stand-in of the platform settings API: remembers what was set; `test` answers from `testAnswer`. */
function serve(testAnswer: [number, unknown]) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  const items = [item('EMAIL_API_KEY'), item('CODEHOST_CLIENT_SECRET', { testable: false, category: 'oauth' })];
  const audit: unknown[] = [];
  vi.stubGlobal('fetch', async (input: Request | string) => {
    const req = typeof input === 'string' ? new Request(new URL(input, 'http://app.test')) : input;
    const url = new URL(req.url).pathname;
    const body = req.method === 'PUT' ? await req.clone().json() : null;
    calls.push({ method: req.method, url, body });
    const json = (status: number, b: unknown) =>
      new Response(JSON.stringify(b), { status, headers: { 'content-type': 'application/json' } });
    if (url === '/api/crm/platform/settings') return json(200, { items });
    if (url === '/api/crm/platform/audit') return json(200, { items: audit, count: audit.length });
    if (req.method === 'PUT' && url === '/api/crm/platform/settings/EMAIL_API_KEY') {
      const value = (body as { value: string }).value;
      items[0] = item('EMAIL_API_KEY', { set: true, preview: `${value.slice(0, 4)}…`, length: value.length });
      audit.push({
        id: 1,
        key_name: 'EMAIL_API_KEY',
        action: 'set',
        ok: true,
        client_ip: '127.0.0.1',
        user_agent: null,
        actor_email: 'admin@example.com',
        created_at: '2026-11-23T10:00:00Z',
      });
      return json(200, items[0]);
    }
    if (url === '/api/crm/platform/settings/EMAIL_API_KEY/test') return json(...testAnswer);
    return json(404, { error: 'not_found', message: 'Not found.' });
  });
  return calls;
}

function renderSecrets() {
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider>
        <Secrets />
      </I18nProvider>
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('platform secrets', () => {
  it('sets a value through a password field, shows the preview and the audit row, never the value', async () => {
    const calls = serve([200, { ok: true, detail: 'The e-mail API accepted it.' }]);
    const { container } = renderSecrets();
    const field = (await screen.findByLabelText('New value of EMAIL_API_KEY')) as HTMLInputElement;
    expect(field.type).toBe('password');
    const card = field.closest('li')!;
    const save = within(card as HTMLElement).getByRole('button', { name: 'Save' }) as HTMLButtonElement;
    fireEvent.change(field, { target: { value: 'short' } });
    expect(save.disabled).toBe(true);
    fireEvent.change(field, { target: { value: 're_secret_value_123' } });
    fireEvent.click(save);
    await within(card as HTMLElement).findByText('Set: re_s… (19 characters)');
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ value: 're_secret_value_123' });
    expect(field.value).toBe('');
    expect(await screen.findByText('admin@example.com')).toBeTruthy();
    expect(container.textContent).not.toContain('re_secret_value_123');

    fireEvent.click(within(card as HTMLElement).getByRole('button', { name: 'Test' }));
    expect((await within(card as HTMLElement).findByText('Test passed.')).className).not.toBe('error');
  });

  it('a secret that is not testable has its Test button disabled; a 501 says so without an error', async () => {
    serve([501, { error: 'not_testable', message: 'EMAIL_API_KEY cannot be tested on its own.' }]);
    renderSecrets();
    const oauth = (await screen.findByLabelText('New value of CODEHOST_CLIENT_SECRET')).closest('li') as HTMLElement;
    expect((within(oauth).getByRole('button', { name: 'Test' }) as HTMLButtonElement).disabled).toBe(true);
    const email = screen.getByLabelText('New value of EMAIL_API_KEY').closest('li') as HTMLElement;
    fireEvent.click(within(email).getByRole('button', { name: 'Test' }));
    await within(email).findByText('This secret cannot be tested on its own.');
    expect(within(email).queryByRole('alert')).toBeNull();
  });
});

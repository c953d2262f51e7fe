import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';
import Login from './Login';

function renderLogin() {
  const router = createMemoryRouter(
    [
      { path: '/login', element: <Login /> },
      { path: '/projects/:name', element: <p>project page</p> },
    ],
    { initialEntries: ['/login?next=/projects/alpha'] },
  );
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <I18nProvider>
        <RouterProvider router={router} />
      </I18nProvider>
    </QueryClientProvider>,
  );
}

/** The service's answers, by path (the component talks to it through fetch). */
function serve(answers: Record<string, [number, unknown]>) {
  const calls: { url: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', async (input: Request | string) => {
    const req = typeof input === 'string' ? new Request(new URL(input, 'http://app.test')) : input;
    const url = new URL(req.url).pathname;
    calls.push({ url, body: req.method === 'POST' ? await req.clone().json() : null });
    const [status, body] = answers[url] ?? [404, { error: 'not_found', message: 'Not found.' }];
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('sign-in page', () => {
  it('every control has a label; wrong credentials show the envelope message and keep the user here', async () => {
    const calls = serve({
      '/api/auth/login': [401, { error: 'invalid_credentials', message: 'Wrong e-mail or password.' }],
    });
    renderLogin();
    fireEvent.change(screen.getByLabelText('E-mail'), { target: { value: 'ann@example.com' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'nope' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Wrong e-mail or password.');
    expect(calls.find((c) => c.url === '/api/auth/login')?.body).toEqual({
      email: 'ann@example.com',
      password: 'nope',
    });
    expect(localStorage.getItem('crm.token')).toBeNull();
  });

  it('a good sign-in keeps the token and goes to the ?next= page', async () => {
    serve({ '/api/auth/login': [200, { token: 'tok', user: {}, needs_verification: false }] });
    renderLogin();
    fireEvent.change(screen.getByLabelText('E-mail'), { target: { value: 'ann@example.com' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'right' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('project page')).toBeTruthy();
    expect(localStorage.getItem('crm.token')).toBe('tok');
  });

  it('offers "Sign in with …" only when the identity provider is configured, carrying ?next=', async () => {
    serve({ '/api/auth/oidc/config': [200, { enabled: true, name: 'Acme ID' }] });
    renderLogin();
    const link = await screen.findByRole('link', { name: 'Sign in with Acme ID' });
    expect(link.getAttribute('href')).toBe('/api/auth/oidc/start?redirect=%2Fprojects%2Falpha');
    cleanup();
    serve({ '/api/auth/oidc/config': [200, { enabled: false, name: 'Acme ID' }] });
    renderLogin();
    await screen.findByRole('button', { name: 'Sign in' });
    expect(screen.queryByRole('link', { name: /Sign in with/ })).toBeNull();
  });
});

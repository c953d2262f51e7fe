import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';
import Notes, { noteIdOf } from './Notes';
import { uploadSource } from '../../features/notes/notesTransfer';
import { MB } from '../../features/notes/notesUpload';

type Answer = [number, unknown];

/** The service's answers by "METHOD path"; the calls made. */
function serve(answers: Record<string, Answer | (() => Answer)>) {
  const calls: { key: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', async (input: Request | string, init?: RequestInit) => {
    const req = typeof input === 'string' ? new Request(new URL(input, 'http://app.test'), init) : input;
    const key = `${req.method} ${new URL(req.url).pathname}`;
    const text = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.clone().text();
    calls.push({ key, body: text ? JSON.parse(text) : null });
    const a = answers[key];
    const [status, body] = typeof a === 'function' ? a() : (a ?? [404, { error: 'not_found', message: 'Not found.' }]);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return calls;
}

function renderAt(url: string) {
  const router = createMemoryRouter([{ path: '/projects/:name/:tab', element: <Notes project="p" /> }], {
    initialEntries: [url],
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider>
        <RouterProvider router={router} />
      </I18nProvider>
    </QueryClientProvider>,
  );
  return router;
}

const note = {
  id: 5,
  title: 'Competitors',
  description: 'Who sells what',
  created_at: '2026-11-20T10:00:00.000Z',
  source_count: 2,
};
const detail = {
  ...note,
  sources: [
    {
      id: 11,
      source_type: 'txt',
      title: 'memo.txt',
      url: null,
      status: 'done',
      duration_seconds: null,
      error: null,
      content_text: 'Prices rose by 4 percent.',
      size_bytes: 2048,
      created_at: '2026-11-20T10:01:00.000Z',
    },
    {
      id: 12,
      source_type: 'web',
      title: 'example.com/report',
      url: 'https://example.com/report',
      status: 'error',
      duration_seconds: null,
      error: 'The page could not be read.',
      content_text: null,
      size_bytes: null,
      created_at: '2026-11-20T10:02:00.000Z',
    },
  ],
  issue_links: [{ issue_id: 3, title: 'Call the vendor' }],
  chats: [
    { role: 'user', content: 'What changed?', created_at: '2026-11-20T10:03:00.000Z', sources: [] },
    {
      role: 'assistant',
      content: 'Prices rose [S11].',
      created_at: '2026-11-20T10:03:05.000Z',
      sources: [{ source_id: 11, title: 'memo.txt' }],
    },
  ],
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('notes tab', () => {
  it('reads the note id from the query, positive integers only', () => {
    expect(noteIdOf('12')).toBe(12);
    expect(noteIdOf(null)).toBeNull();
    expect(noteIdOf('0')).toBeNull();
    expect(noteIdOf('1.5')).toBeNull();
    expect(noteIdOf('x')).toBeNull();
  });

  it('lists notes with their source counts and deletes one only after the confirmation', async () => {
    const calls = serve({
      'GET /api/crm/projects/p/notes': [200, [note]],
      'DELETE /api/crm/projects/p/notes/5': [200, { ok: true }],
    });
    renderAt('/projects/p/notes');
    await screen.findByRole('button', { name: 'Competitors' });
    expect(screen.getByText(/2 sources/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Delete the note Competitors' }));
    const dialog = await screen.findByRole('dialog');
    expect(calls.some((c) => c.key.startsWith('DELETE'))).toBe(false);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await vi.waitFor(() => expect(calls.some((c) => c.key === 'DELETE /api/crm/projects/p/notes/5')).toBe(true));
  });

  it('creates a note and opens it (its id in the URL)', async () => {
    const calls = serve({
      'GET /api/crm/projects/p/notes': [200, []],
      'POST /api/crm/projects/p/notes': [201, { id: 5, title: 'Competitors' }],
      'GET /api/crm/projects/p/notes/5': [200, detail],
    });
    const router = renderAt('/projects/p/notes');
    await screen.findByText(/No notes yet/);
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Competitors' } });
    fireEvent.change(screen.getByLabelText('Description'), { target: { value: 'Who sells what' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create note' }));
    await screen.findByRole('heading', { name: 'Competitors' });
    expect(router.state.location.search).toBe('?note=5');
    expect(calls.find((c) => c.key === 'POST /api/crm/projects/p/notes')?.body).toEqual({
      title: 'Competitors',
      description: 'Who sells what',
    });
  });

  it("shows a note's sources with status, error and text, the chat and the issue links; rename empty resets", async () => {
    const calls = serve({
      'GET /api/crm/projects/p/notes/5': [200, detail],
      'PATCH /api/crm/projects/p/notes/5/sources/11': [200, {}],
    });
    renderAt('/projects/p/notes?note=5');
    await screen.findByRole('heading', { name: 'Competitors' });
    expect(screen.getByText('The page could not be read.')).toBeTruthy();
    expect(screen.getByText('Failed')).toBeTruthy();
    expect(screen.getByText(/2 KB/)).toBeTruthy();
    expect(screen.getByText('Prices rose [S11].')).toBeTruthy();
    expect(screen.getByRole('link', { name: '#3 Call the vendor' }).getAttribute('href')).toBe('/projects/p/issues');
    fireEvent.click(screen.getByRole('button', { name: 'Show text' }));
    expect((await screen.findByRole('dialog')).textContent).toContain('Prices rose by 4 percent.');
    fireEvent.keyDown(document.activeElement ?? document.body, { key: 'Escape' });
    const row = screen.getByText('memo.txt', { selector: 'strong' }).closest('li')!;
    fireEvent.click(within(row).getByRole('button', { name: 'Rename' }));
    fireEvent.change(within(row).getByLabelText('New name'), { target: { value: '  ' } });
    fireEvent.click(within(row).getByRole('button', { name: 'Save' }));
    await vi.waitFor(() =>
      expect(calls.find((c) => c.key === 'PATCH /api/crm/projects/p/notes/5/sources/11')?.body).toEqual({
        title: null,
      }),
    );
  });

  it('shows the first 100,000 characters of a long text and offers the whole as a download', async () => {
    const long = { ...detail.sources[0], content_text: 'a'.repeat(100_001) };
    serve({ 'GET /api/crm/projects/p/notes/5': [200, { ...detail, sources: [long] }] });
    renderAt('/projects/p/notes?note=5');
    fireEvent.click(await screen.findByRole('button', { name: 'Show text' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/^The first 100,000 of 100,001 characters/)).toBeTruthy();
    expect(within(dialog).getByLabelText('Extracted text').textContent).toHaveLength(100_000);
    expect(within(dialog).getByRole('button', { name: 'Download the text' })).toBeTruthy();
  });

  it('refuses a file type the service does not accept before sending it', async () => {
    const calls = serve({ 'GET /api/crm/projects/p/notes/5': [200, detail] });
    renderAt('/projects/p/notes?note=5');
    await screen.findByRole('heading', { name: 'Competitors' });
    const file = new File(['MZ'], 'tool.exe');
    fireEvent.change(screen.getByLabelText('File'), { target: { files: [file] } });
    expect((await screen.findByRole('alert')).textContent).toBe('This type of file cannot be a source.');
    expect(calls.filter((c) => c.key.includes('/sources')).length).toBe(0);
  });
});

/** A stand-in XMLHttpRequest answering from a script: one answer per send, progress reported in halves. */
function fakeXhr(script: (index: string | null, bytes: number) => [number, unknown]) {
  const sent: { url: string; index: string | null; bytes: number }[] = [];
  class Xhr {
    status = 0;
    responseText = '';
    upload: { onprogress: ((e: { loaded: number }) => void) | null } = { onprogress: null };
    onload: (() => void) | null = null;
    onerror: (() => void) | null = null;
    onabort: (() => void) | null = null;
    private url = '';
    private headers: Record<string, string> = {};
    open(_m: string, url: string) {
      this.url = url;
    }
    setRequestHeader(k: string, v: string) {
      this.headers[k.toLowerCase()] = v;
    }
    abort() {
      this.onabort?.();
    }
    send(body: Blob | FormData) {
      const bytes = body instanceof Blob ? body.size : 0;
      const index = this.headers['x-chunk-index'] ?? null;
      sent.push({ url: this.url, index, bytes });
      const [status, answer] = script(index, bytes);
      queueMicrotask(() => {
        this.upload.onprogress?.({ loaded: bytes / 2 });
        if (status === 0) return this.onerror?.();
        this.status = status;
        this.responseText = JSON.stringify(answer);
        this.onload?.();
      });
    }
  }
  vi.stubGlobal('XMLHttpRequest', Xhr);
  return sent;
}

describe('uploading a source', () => {
  it('sends a small file in one multipart request', async () => {
    const sent = fakeXhr(() => [201, { source_id: 9, status: 'queued' }]);
    const seen: number[] = [];
    const id = await uploadSource('p', 5, new File(['hello'], 'a.txt'), (n) => seen.push(n));
    expect(id).toBe(9);
    expect(sent).toEqual([{ url: '/api/crm/projects/p/notes/5/sources', index: null, bytes: 0 }]);
    expect(seen.at(-1)).toBe(100);
  });

  it('sends a file above 90 MB in chunks, retrying a lost chunk and following a 409 to the expected index', async () => {
    const calls = serve({
      'POST /api/crm/projects/p/notes/5/sources/chunk-init': [201, { upload_id: 'a'.repeat(32), chunk_size: 40 * MB }],
    });
    let lost = false;
    let skipped = false;
    const sent = fakeXhr((index) => {
      if (index === '1' && !lost) {
        lost = true;
        return [0, null];
      }
      if (index === '1' && !skipped) {
        // The service got chunk 1 after all (the answer was lost): it expects chunk 2.
        skipped = true;
        return [409, { error: 'chunk_out_of_order', message: 'Expected chunk 2.', expected_index: 2 }];
      }
      return index === '2' ? [201, { done: true, source_id: 21, status: 'queued' }] : [200, { received_bytes: 1 }];
    });
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const seen: number[] = [];
    const file = new File([new Uint8Array(100 * MB)], 'talk.mp4', { type: 'video/mp4' });
    const done = uploadSource('p', 5, file, (n) => seen.push(n));
    await vi.runAllTimersAsync();
    expect(await done).toBe(21);
    vi.useRealTimers();
    expect(calls[0].body).toEqual({ filename: 'talk.mp4', mime: 'video/mp4', size: 100 * MB });
    expect(sent.map((s) => [s.index, s.bytes])).toEqual([
      ['0', 40 * MB],
      ['1', 40 * MB],
      ['1', 40 * MB],
      ['2', 20 * MB],
    ]);
    expect(sent[0].url).toBe(`/api/crm/projects/p/notes/5/sources/chunks/${'a'.repeat(32)}`);
    expect(seen.every((n, i) => i === 0 || n >= seen[i - 1])).toBe(true);
    expect(seen.at(-1)).toBe(100);
  });

  it('gives up with the envelope when a chunk is refused for good', async () => {
    serve({
      'POST /api/crm/projects/p/notes/5/sources/chunk-init': [201, { upload_id: 'b'.repeat(32), chunk_size: 64 * MB }],
    });
    fakeXhr(() => [413, { error: 'chunk_too_large', message: 'Too large.' }]);
    await expect(uploadSource('p', 5, new File([new Uint8Array(91 * MB)], 'talk.mp4'), () => {})).rejects.toMatchObject(
      { status: 413, message: 'Too large.' },
    );
  });
});

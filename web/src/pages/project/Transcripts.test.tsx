import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';
import Transcripts from './Transcripts';

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const base = {
  transcript_id: 7,
  job_id: 'job-7',
  filename: 'standup.wav',
  kind: 'audio',
  mime: 'audio/wav',
  size_bytes: 9644,
  embed_to_rag: true,
  created_at: '2026-11-23T10:00:00.000Z',
  updated_at: '2026-11-23T10:00:00.000Z',
  finished_at: null,
  transcript_text: null,
  summary_json: null,
  frames_json: null,
  error: null,
};

describe('a transcript page', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });

  it('follows the job live: the current step moves on each event; at the end, the text and summary show', async () => {
    let detail: Record<string, unknown> = {
      ...base,
      status: 'transcribing',
      progress_pct: 20,
      step_label: 'Transcribing',
    };
    let push: (s: string) => void = () => {};
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        push = (s) => c.enqueue(encoder.encode(s));
      },
    });
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: Request | string) => {
        const url = new URL(typeof input === 'string' ? input : input.url, 'http://localhost');
        if (url.pathname.startsWith('/api/crm/i18n/')) return json({ messages: {} });
        if (url.pathname === '/api/crm/projects/p/transcripts/7') return json(detail);
        if (url.pathname === '/api/crm/projects/p/transcripts/job/job-7/progress')
          return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
        return json({ error: 'not_found', message: 'no such route' }, 404);
      }),
    );
    render(
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <I18nProvider>
          <MemoryRouter initialEntries={['/projects/p/transcripts?id=7']}>
            <Transcripts project="p" />
          </MemoryRouter>
        </I18nProvider>
      </QueryClientProvider>,
    );
    const steps = await screen.findByRole('list', { name: 'Steps' });
    const current = () => steps.querySelector('[aria-current="step"]')?.textContent ?? '';
    await waitFor(() => expect(current()).toMatch(/Transcribing/));
    expect(
      within(steps)
        .getAllByRole('listitem')
        .map((li) => li.className),
    ).toEqual([
      'tr-step done',
      'tr-step done',
      'tr-step current',
      'tr-step pending',
      'tr-step pending',
      'tr-step pending',
    ]);

    // The row changes first, then the event tells of it (as the pipeline does); the percent moves on by events.
    detail = { ...detail, status: 'summarizing', progress_pct: 80, step_label: 'Summarizing' };
    await act(async () =>
      push(event('progress', { status: 'summarizing', progress_pct: 80, step_label: 'Summarizing', error: null })),
    );
    await waitFor(() => expect(current()).toMatch(/Summarizing/));
    expect(current()).toMatch(/80 %/);
    // Within a status the percent comes by the stream alone (the row is not read again).
    await act(async () =>
      push(event('progress', { status: 'summarizing', progress_pct: 85, step_label: 'Summarizing', error: null })),
    );
    await waitFor(() => expect(current()).toMatch(/85 %/));

    detail = {
      ...detail,
      status: 'done',
      progress_pct: 100,
      step_label: 'Done',
      transcript_text: 'We ship on Friday.',
      summary_json: {
        tldr: 'Ship on Friday.',
        key_points: ['Release is ready'],
        action_items: [
          { task: 'Write the notes', owner: 'Olena' },
          { task: 'Check the docs', owner: null },
        ],
        decisions: ['Ship on Friday'],
        topics: ['release'],
        model: 'claude-haiku-4-5',
        generated_at: '2026-11-23T10:05:00.000Z',
      },
    };
    await act(async () => {
      push(event('progress', { status: 'done', progress_pct: 100, step_label: 'Done', error: null }));
      push(event('end', { status: 'done', progress_pct: 100, step_label: 'Done', error: null }));
    });
    await screen.findByText('We ship on Friday.');
    expect(screen.getByText('Ship on Friday.')).toBeTruthy();
    expect(screen.getByText(/Write the notes/).textContent).toMatch(/Olena/);
    expect(screen.getByText(/Check the docs/).textContent).toMatch(/no owner/);
    expect(screen.getByText(/Summarized by claude-haiku-4-5/)).toBeTruthy();
    const done = screen.getByRole('list', { name: 'Steps' });
    expect(
      within(done)
        .getAllByRole('listitem')
        .every((li) => li.className === 'tr-step done'),
    ).toBe(true);
    expect(screen.queryByRole('progressbar')).toBeNull();
  });

  it('shows a failed job with its reason at the step it stopped in', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: Request | string) => {
        const url = new URL(typeof input === 'string' ? input : input.url, 'http://localhost');
        if (url.pathname.startsWith('/api/crm/i18n/')) return json({ messages: {} });
        return json({
          ...base,
          kind: 'video',
          status: 'failed',
          progress_pct: 20,
          step_label: 'Failed',
          error: 'The speech server answered 500.',
        });
      }),
    );
    render(
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <I18nProvider>
          <MemoryRouter initialEntries={['/projects/p/transcripts?id=7']}>
            <Transcripts project="p" />
          </MemoryRouter>
        </I18nProvider>
      </QueryClientProvider>,
    );
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('The speech server answered 500.');
    expect(alert.closest('li')?.className).toBe('tr-step failed');
    expect(alert.closest('li')?.textContent).toMatch(/Transcribing/);
    // A video has the frame steps, still to come.
    expect(screen.getByText('Describing the frames').closest('li')?.className).toBe('tr-step pending');
  });

  it('the upload form names the file after the chosen one and refuses a type the server does not accept', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: Request | string) => {
        const url = new URL(typeof input === 'string' ? input : input.url, 'http://localhost');
        if (url.pathname.startsWith('/api/crm/i18n/')) return json({ messages: {} });
        return json({ items: [], next_cursor: null });
      }),
    );
    render(
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <I18nProvider>
          <MemoryRouter initialEntries={['/projects/p/transcripts']}>
            <Transcripts project="p" />
          </MemoryRouter>
        </I18nProvider>
      </QueryClientProvider>,
    );
    await screen.findByText('No transcripts yet. Upload a meeting recording above.');
    const input = screen.getByLabelText('Recording (audio or video)') as HTMLInputElement;
    fireEvent.change(input, { target: { files: [new File(['x'], 'notes.txt', { type: 'text/plain' })] } });
    expect((screen.getByLabelText('File name') as HTMLInputElement).value).toBe('notes.txt');
    expect((screen.getByLabelText(/search index/) as HTMLInputElement).checked).toBe(true);
    fireEvent.submit(input.closest('form')!);
    expect((await screen.findByRole('alert')).textContent).toMatch(/must end in mp3, wav/);
  });
});

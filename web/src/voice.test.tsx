import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiFailure } from './api/client';
import { projectOfPath } from './features/feedback/logic';
import { I18nProvider } from './i18n';
import { TextArea } from './ui';
import { joinDictation } from './lib/dictation';
import { transcribe } from './features/voice/api';
import { dictationError, insertIntoField } from './voice';

describe('dictation text', () => {
  it('joins the text at the caret with single spaces, none at a line start or before a space', () => {
    expect(joinDictation('', 'hello', '')).toEqual({ value: 'hello', caret: 5 });
    expect(joinDictation('Plan', ' the survey ', '')).toEqual({ value: 'Plan the survey', caret: 15 });
    expect(joinDictation('a ', 'b', 'c')).toEqual({ value: 'a b c', caret: 3 });
    expect(joinDictation('line\n', 'b', ' rest')).toEqual({ value: 'line\nb rest', caret: 6 });
    expect(joinDictation('keep', '   ', 'this')).toEqual({ value: 'keepthis', caret: 4 });
  });
});

function Controlled({ onValue }: { onValue: (v: string) => void }) {
  const [v, setV] = useState('Hello world');
  return (
    <textarea
      aria-label="Notes"
      value={v}
      onChange={(e) => {
        setV(e.target.value);
        onValue(e.target.value);
      }}
    />
  );
}

describe('inserting into a field', () => {
  it("a controlled React field's onChange sees the text inserted at the caret, replacing a selection", () => {
    const seen: string[] = [];
    render(<Controlled onValue={(v) => seen.push(v)} />);
    const el = screen.getByLabelText('Notes') as HTMLTextAreaElement;
    el.setSelectionRange(5, 5);
    insertIntoField(el, 'big');
    expect(seen.at(-1)).toBe('Hello big world');
    expect(el.value).toBe('Hello big world');
    expect(el.selectionStart).toBe(9);
    el.setSelectionRange(6, 9);
    insertIntoField(el, 'small');
    expect(el.value).toBe('Hello small world');
    fireEvent.change(el, { target: { value: 'typed' } });
    expect(seen.at(-1)).toBe('typed');
  });
});

describe('transcribe', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });
  it('posts the clip and locale as multipart through the typed client and answers the text', async () => {
    const calls: Request[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (req: Request) => {
        calls.push(req);
        return new Response(JSON.stringify({ transcript: 'plan the survey' }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      }),
    );
    const text = await transcribe(new Blob(['abc'], { type: 'audio/webm;codecs=opus' }), 'uk-UA');
    expect(text).toBe('plan the survey');
    expect(new URL(calls[0].url).pathname).toBe('/api/crm/voice/transcribe');
    expect(calls[0].method).toBe('POST');
    expect(calls[0].headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    const body = await calls[0].text();
    expect(body).toMatch(/name="locale"\r\n\r\nuk-UA\r\n/);
    expect(body).toMatch(/name="audio"; filename="clip\.webm"/);
  });

  it('a 503 (no speech server) is an ApiFailure with a clear sentence for the user', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(
        async () =>
          new Response(JSON.stringify({ error: 'speech_unavailable', message: 'No speech server is configured.' }), {
            status: 503,
            headers: { 'content-type': 'application/json' },
          }),
      ),
    );
    const err = await transcribe(new Blob(['abc'], { type: 'audio/ogg' }), 'en-US').catch((e) => e);
    expect(err).toBeInstanceOf(ApiFailure);
    expect(err.status).toBe(503);
    const t = (s: string) => s;
    expect(dictationError(err, t)).toBe('Dictation is not available: the server has no speech service configured.');
    expect(dictationError(new ApiFailure(429, { error: 'busy', message: 'Too many clips.' }), t)).toBe(
      'Too many clips.',
    );
    expect(dictationError(new Error('x'), t)).toBe('Dictation failed.');
  });
});

describe('feedback', () => {
  it("names the project of a project page's path", () => {
    expect(projectOfPath('/projects/market-study/transcripts')).toBe('market-study');
    expect(projectOfPath('/projects/market-study')).toBe('market-study');
    expect(projectOfPath('/projects')).toBeNull();
    expect(projectOfPath('/account')).toBeNull();
  });
});

class FakeRecorder {
  static isTypeSupported = (t: string) => t === 'audio/webm';
  mimeType = 'audio/webm';
  ondataavailable: ((e: { data: Blob }) => void) | null = null;
  onstop: (() => void) | null = null;
  start() {}
  stop() {
    this.ondataavailable?.({ data: new Blob(['clip'], { type: 'audio/webm' }) });
    this.onstop?.();
  }
}

/** A microphone that gives a stream with no tracks (MediaRecorder is faked). */
function withMicrophone() {
  Object.defineProperty(navigator, 'mediaDevices', {
    value: { getUserMedia: async () => ({ getTracks: () => [] }) },
    configurable: true,
  });
}

function Form() {
  const [v, setV] = useState('Notes:');
  return <TextArea label="Description" value={v} onChange={(e) => setV(e.target.value)} />;
}

describe('the dictate button of a TextArea', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    localStorage.removeItem('crm.token');
    delete (navigator as { mediaDevices?: unknown }).mediaDevices;
  });
  const setup = (voice: () => Response) => {
    localStorage.setItem('crm.token', 'token-1');
    vi.stubGlobal('MediaRecorder', FakeRecorder);
    withMicrophone();
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: Request | string) => {
        const url = new URL(typeof input === 'string' ? input : input.url, 'http://localhost');
        if (url.pathname.startsWith('/api/crm/i18n/'))
          return new Response(JSON.stringify({ messages: {} }), { headers: { 'content-type': 'application/json' } });
        return voice();
      }),
    );
    render(
      <I18nProvider>
        <Form />
      </I18nProvider>,
    );
  };

  it('records, transcribes and puts the text into the field', async () => {
    setup(
      () =>
        new Response(JSON.stringify({ transcript: 'call the client' }), {
          headers: { 'content-type': 'application/json' },
        }),
    );
    const field = screen.getByLabelText('Description') as HTMLTextAreaElement;
    fireEvent.click(screen.getByRole('button', { name: 'Dictate' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Stop dictation' }));
    await waitFor(() => expect(field.value).toBe('Notes: call the client'));
    expect(screen.getByRole('button', { name: 'Dictate' }).getAttribute('aria-describedby')).toBe(
      field.labels?.[0]?.id,
    );
  });

  it('says clearly when the server has no speech service (503)', async () => {
    setup(
      () =>
        new Response(JSON.stringify({ error: 'speech_unavailable', message: 'No speech server.' }), {
          status: 503,
          headers: { 'content-type': 'application/json' },
        }),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Dictate' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Stop dictation' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Dictation is not available: the server has no speech service configured.',
    );
    expect((screen.getByLabelText('Description') as HTMLTextAreaElement).value).toBe('Notes:');
  });

  it('is not offered when the service has no speech server', async () => {
    localStorage.setItem('crm.token', 'token-without-speech');
    vi.stubGlobal('MediaRecorder', FakeRecorder);
    withMicrophone();
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: Request | string) => {
        const url = new URL(typeof input === 'string' ? input : input.url, 'http://localhost');
        asked.push(url.pathname);
        const body = url.pathname === '/api/crm/voice/status' ? { available: false } : { messages: {} };
        return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
      }),
    );
    render(
      <I18nProvider>
        <Form />
      </I18nProvider>,
    );
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Dictate' })).toBeNull());
    expect(asked).toContain('/api/crm/voice/status');
  });

  it('is not offered to a guest', () => {
    vi.stubGlobal('MediaRecorder', FakeRecorder);
    withMicrophone();
    vi.stubGlobal(
      'fetch',
      async () => new Response('{"messages":{}}', { headers: { 'content-type': 'application/json' } }),
    );
    render(
      <I18nProvider>
        <Form />
      </I18nProvider>,
    );
    expect(screen.queryByRole('button', { name: 'Dictate' })).toBeNull();
  });
});

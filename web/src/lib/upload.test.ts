import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../api/client';
import { uploadWithProgress } from './upload';

/** An XMLHttpRequest that reports progress in two steps, then answers `status` with `body`. */
function fakeXhr(status: number, body: unknown) {
  const sent: { method?: string; url?: string; headers: Record<string, string>; body?: unknown } = { headers: {} };
  class FakeXhr {
    status = 0;
    statusText = '';
    responseText = '';
    upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null } = {
      onprogress: null,
    };
    onload: (() => void) | null = null;
    onerror: (() => void) | null = null;
    onabort: (() => void) | null = null;
    open(method: string, url: string) {
      sent.method = method;
      sent.url = url;
    }
    setRequestHeader(k: string, v: string) {
      sent.headers[k] = v;
    }
    abort() {
      this.onabort?.();
    }
    send(b: unknown) {
      sent.body = b;
      queueMicrotask(() => {
        this.upload.onprogress?.({ loaded: 50, total: 100, lengthComputable: true });
        this.upload.onprogress?.({ loaded: 100, total: 100, lengthComputable: true });
        this.status = status;
        this.responseText = JSON.stringify(body);
        this.onload?.();
      });
    }
  }
  vi.stubGlobal('XMLHttpRequest', FakeXhr);
  return sent;
}

describe('an upload with progress', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    localStorage.removeItem('crm.token');
  });

  it('sends the form with the token, reports progress and answers the JSON', async () => {
    localStorage.setItem('crm.token', 'token-1');
    const sent = fakeXhr(202, { transcript_id: 3, job_id: 'j', status: 'queued' });
    const fd = new FormData();
    const progress: number[] = [];
    const out = await uploadWithProgress('/api/x', fd, (loaded, total) => progress.push(loaded / total));
    expect(out).toEqual({ transcript_id: 3, job_id: 'j', status: 'queued' });
    expect(progress).toEqual([0.5, 1]);
    expect(sent).toMatchObject({ method: 'POST', url: '/api/x', body: fd });
    expect(sent.headers.authorization).toBe('Bearer token-1');
  });

  it('an error answer is an ApiFailure with the envelope', async () => {
    fakeXhr(503, { error: 'speech_unavailable', message: 'No speech server is configured; transcripts need one.' });
    const err = (await uploadWithProgress('/api/x', new FormData(), () => {}).catch((e) => e)) as ApiFailure;
    expect(err).toBeInstanceOf(ApiFailure);
    expect(err.status).toBe(503);
    expect(err.body.error).toBe('speech_unavailable');
    expect(err.message).toBe('No speech server is configured; transcripts need one.');
  });

  it('an abort rejects with status 0 and `aborted`', async () => {
    fakeXhr(200, {});
    const ac = new AbortController();
    const p = uploadWithProgress('/api/x', new FormData(), () => {}, ac.signal);
    ac.abort();
    const err = await p.catch((e) => e);
    expect(err).toMatchObject({ status: 0, body: { error: 'aborted' } });
  });
});

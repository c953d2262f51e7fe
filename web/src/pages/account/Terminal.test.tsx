import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';

/** A stand-in for xterm.js: records what is written, lets the test type. */
const xterm = vi.hoisted(() => ({
  written: [] as string[],
  type: (_d: string) => {},
  resized: [] as [number, number][],
}));
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    cols: number;
    rows: number;
    constructor(o: { cols: number; rows: number }) {
      this.cols = o.cols;
      this.rows = o.rows;
    }
    open() {}
    focus() {}
    write(d: string) {
      xterm.written.push(d);
    }
    onData(fn: (d: string) => void) {
      xterm.type = fn;
      return { dispose() {} };
    }
    resize(c: number, r: number) {
      this.cols = c;
      this.rows = r;
      xterm.resized.push([c, r]);
    }
    dispose() {}
  },
}));
vi.mock('@xterm/xterm/css/xterm.css', () => ({}));

/** A stand-in WebSocket: the last one made, its frames sent, and hooks to open, answer and close it. */
class FakeSocket {
  static OPEN = 1;
  static last: FakeSocket;
  readyState = 0;
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  send(d: string) {
    this.sent.push(d);
  }
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  serverClose(code: number, reason: string) {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

beforeEach(() => {
  localStorage.setItem('crm.token', 'tok');
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      disconnect() {}
    },
  );
  vi.stubGlobal('fetch', async () => new Response('{}', { headers: { 'content-type': 'application/json' } }));
  xterm.written = [];
  xterm.resized = [];
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('cloud terminal', () => {
  it('connects as the user, sends the size and keystrokes as frames, shows output and the close reason', async () => {
    const { default: Terminal } = await import('./Terminal');
    const onClose = vi.fn();
    render(
      <I18nProvider>
        <Terminal chatId="42" onClose={onClose} />
      </I18nProvider>,
    );
    const ws = FakeSocket.last;
    expect(ws.url).toMatch(/^ws:\/\/[^/]+\/api\/crm\/ws\/cloud\/42\/terminal\?token=tok&cols=\d+&rows=\d+$/);
    expect(screen.getByText('Connecting to your container…')).toBeTruthy();
    expect(screen.getByRole('application', { name: 'Terminal' })).toBeTruthy();

    act(() => ws.open());
    expect(JSON.parse(ws.sent[0]!)).toMatchObject({ type: 'resize' });
    act(() => xterm.type('ls\r'));
    expect(JSON.parse(ws.sent[1]!)).toEqual({ type: 'input', data: 'ls\r' });
    act(() => ws.onmessage?.({ data: 'file.txt\r\n$ ' }));
    expect(xterm.written).toContain('file.txt\r\n$ ');

    act(() => ws.serverClose(1000, 'idle_timeout'));
    expect(onClose).toHaveBeenCalledWith('The terminal closed after two minutes without activity.');
    expect(screen.getByText('Disconnected.')).toBeTruthy();
    expect(xterm.written.at(-1)).toContain('two minutes');
    // Keystrokes after the close go nowhere.
    act(() => xterm.type('x'));
    expect(ws.sent).toHaveLength(2);
  });
});

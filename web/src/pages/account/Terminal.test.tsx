import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../i18n';

/** A stand-in for xterm.js: records what is written, lets the test type. */
const xterm = vi.hoisted(() => ({
  written: [] as string[],
  type: (_d: string) => {},
  resized: [] as [number, number][],
  /** The size the fit addon finds for the box (the test changes it to resize the box). */
  box: { cols: 100, rows: 30 },
}));
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    cols = 80;
    rows = 24;
    private onResizeFns: Array<(s: { cols: number; rows: number }) => void> = [];
    loadAddon(addon: { activate(t: unknown): void }) {
      addon.activate(this);
    }
    onResize(fn: (s: { cols: number; rows: number }) => void) {
      this.onResizeFns.push(fn);
      return { dispose() {} };
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
      for (const fn of this.onResizeFns) fn({ cols: c, rows: r });
    }
    dispose() {}
  },
}));
/** A stand-in for the fit addon: resizes its terminal to `xterm.box` when that differs, like the addon. */
vi.mock('@xterm/addon-fit', () => ({
  FitAddon: class {
    private term: any;
    activate(term: unknown) {
      this.term = term;
    }
    fit() {
      const { cols, rows } = xterm.box;
      if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
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

/** The callback of the terminal box's ResizeObserver: call it to tell the terminal its box changed. */
let observed: () => void = () => {};

beforeEach(() => {
  localStorage.setItem('crm.token', 'tok');
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal(
    'ResizeObserver',
    class {
      constructor(fn: () => void) {
        observed = fn;
      }
      observe() {}
      disconnect() {}
    },
  );
  vi.stubGlobal('fetch', async () => new Response('{}', { headers: { 'content-type': 'application/json' } }));
  xterm.written = [];
  xterm.resized = [];
  xterm.box = { cols: 100, rows: 30 };
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
    // The first size is the one the fit addon found for the box.
    expect(ws.url).toMatch(/^ws:\/\/[^/]+\/api\/crm\/ws\/cloud\/42\/terminal\?token=tok&cols=100&rows=30$/);
    expect(screen.getByText('Connecting to your container…')).toBeTruthy();
    expect(screen.getByRole('application', { name: 'Terminal' })).toBeTruthy();

    act(() => ws.open());
    expect(JSON.parse(ws.sent[0]!)).toEqual({ type: 'resize', cols: 100, rows: 30 });
    act(() => xterm.type('ls\r'));
    expect(JSON.parse(ws.sent[1]!)).toEqual({ type: 'input', data: 'ls\r' });
    // The box grows: the addon fits the terminal again and the new size goes to the server; an unchanged box sends nothing.
    xterm.box = { cols: 120, rows: 40 };
    act(() => observed());
    act(() => observed());
    expect(ws.sent.slice(2).map((f) => JSON.parse(f))).toEqual([{ type: 'resize', cols: 120, rows: 40 }]);
    ws.sent.splice(2);
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

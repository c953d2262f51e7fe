/**
 * The cloud container's terminal in the page: xterm.js (this chunk only, with its CSS) over the WebSocket
 * `/api/crm/ws/cloud/:userId/terminal?token=…`. Keystrokes go as `{"type":"input","data"}` frames, the size as
 * `{"type":"resize","cols","rows"}` whenever the box changes; the shell's output arrives as text frames.
 */
import '@xterm/xterm/css/xterm.css';
import { Terminal as XTerm } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { closeMessage, fitSize, inputFrame, resizeFrame, terminalUrl } from '../../features/account/logic';

const FONT = { family: 'ui-monospace, Menlo, Consolas, monospace', size: 14 };

/** One character cell's size in px for the terminal's font (measured from a hidden sample). */
function cellSize(): { width: number; height: number } {
  const probe = document.createElement('span');
  probe.textContent = 'W'.repeat(20);
  Object.assign(probe.style, {
    fontFamily: FONT.family,
    fontSize: `${FONT.size}px`,
    lineHeight: 'normal',
    position: 'absolute',
    visibility: 'hidden',
    whiteSpace: 'pre',
  });
  document.body.append(probe);
  const r = probe.getBoundingClientRect();
  probe.remove();
  return { width: r.width / 20 || 8.4, height: r.height || 17 };
}

/** The terminal of the container of the user whose chat id is `chatId`; `onClose` gets the close message. */
export default function Terminal({ chatId, onClose }: { chatId: string; onClose: (message: string) => void }) {
  const { t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'connecting' | 'open' | 'closed'>('connecting');
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const tRef = useRef(t);
  tRef.current = t;

  useEffect(() => {
    const el = box.current;
    const token = session.token();
    if (!el || !token) return;
    const cell = cellSize();
    const size = () => fitSize(el.clientWidth - 8, el.clientHeight - 8, cell.width, cell.height);
    const first = size();
    const term = new XTerm({
      cols: first.cols,
      rows: first.rows,
      fontFamily: FONT.family,
      fontSize: FONT.size,
      cursorBlink: true,
      convertEol: false,
      screenReaderMode: true,
    });
    term.open(el);
    term.focus();
    const ws = new WebSocket(terminalUrl(window.location, chatId, token, first.cols, first.rows));
    ws.onopen = () => {
      setState('open');
      ws.send(resizeFrame(term.cols, term.rows));
    };
    ws.onmessage = (e) => term.write(typeof e.data === 'string' ? e.data : '');
    ws.onclose = (e) => {
      setState('closed');
      const text = tRef.current(closeMessage(e.code, e.reason), { reason: e.reason || String(e.code) });
      term.write(`\r\n\x1b[2m${text}\x1b[0m\r\n`);
      closeRef.current(text);
    };
    const input = term.onData((d) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(inputFrame(d));
    });
    const observer = new ResizeObserver(() => {
      const { cols, rows } = size();
      if (cols === term.cols && rows === term.rows) return;
      term.resize(cols, rows);
      if (ws.readyState === WebSocket.OPEN) ws.send(resizeFrame(cols, rows));
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      input.dispose();
      ws.onclose = null;
      ws.close(1000);
      term.dispose();
    };
  }, [chatId]);

  return (
    <div className="terminal-wrap">
      <p className="muted" aria-live="polite">
        {state === 'connecting' && t('Connecting to your container…')}
        {state === 'open' && t('Connected. The terminal closes after two minutes without activity.')}
        {state === 'closed' && t('Disconnected.')}
      </p>
      <div ref={box} className="terminal" role="application" aria-label={t('Terminal')} />
    </div>
  );
}

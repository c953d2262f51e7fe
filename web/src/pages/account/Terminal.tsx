/**
 * The cloud container's terminal in the page: xterm.js (this chunk only, with its CSS) over the WebSocket
 * `/api/crm/ws/cloud/:userId/terminal?token=…`. Keystrokes go as `{"type":"input","data"}` frames, the size as
 * `{"type":"resize","cols","rows"}` whenever the box changes; the shell's output arrives as text frames.
 */
import '@xterm/xterm/css/xterm.css';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal as XTerm } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { closeMessage, inputFrame, resizeFrame, terminalUrl } from '../../features/account/logic';

const FONT = { family: 'ui-monospace, Menlo, Consolas, monospace', size: 14 };

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
    const term = new XTerm({
      fontFamily: FONT.family,
      fontSize: FONT.size,
      cursorBlink: true,
      convertEol: false,
      screenReaderMode: true,
    });
    // The size in cells that fills the box: xterm.js's fit addon, from the renderer's own cell size.
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    term.focus();
    const ws = new WebSocket(terminalUrl(window.location, chatId, token, term.cols, term.rows));
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
    const resized = term.onResize(({ cols, rows }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(resizeFrame(cols, rows));
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(el);
    return () => {
      observer.disconnect();
      resized.dispose();
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

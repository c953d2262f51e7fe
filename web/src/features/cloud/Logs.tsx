import { useEffect, useRef, useState } from 'react';
import { logsUrl } from '../account/logic';
import { useI18n } from '../../i18n';
import { session } from '../../session';

/** Log lines kept on the page (older ones scroll away). */
const LOG_KEEP = 500;

/** Follows the container's log (SSE `/api/sse/cloud/:userId/logs`): `data: {line}` per line, `{closed:true}` at the end. */
export function Logs({ chatId }: { chatId: string }) {
  const { t } = useI18n();
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState<'following' | 'closed' | 'error'>('following');
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const token = session.token();
    if (!token) return;
    const es = new EventSource(logsUrl(chatId, token));
    es.onmessage = (e) => {
      let data: { line?: string; closed?: boolean };
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (data.closed) {
        setState('closed');
        es.close();
      } else if (typeof data.line === 'string') {
        const line = data.line;
        setLines((l) => [...l.slice(-(LOG_KEEP - 1)), line]);
      }
    };
    es.onerror = () => {
      setState((s) => (s === 'following' ? 'error' : s));
      es.close();
    };
    return () => es.close();
  }, [chatId]);
  // A block body: in current Chromium scrollIntoView returns a Promise, which React would take for a clean-up.
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'nearest' });
  }, [lines]);
  return (
    <div>
      <p className="muted" aria-live="polite">
        {state === 'following' && t('Following the log…')}
        {state === 'closed' && t('The container was removed; the log has ended.')}
        {state === 'error' && t('The log stream stopped. Open it again to retry.')}
      </p>
      <pre className="cloud-log" tabIndex={0} aria-label={t('Container log')}>
        {lines.length ? lines.join('\n') : t('No log lines in the last hour.')}
        <div ref={end} />
      </pre>
    </div>
  );
}

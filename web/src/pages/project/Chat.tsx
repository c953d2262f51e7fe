import { useQuery } from '@tanstack/react-query';
import { useEffect, useReducer, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiFailure } from '../../api/client';
import { chatHistoryQuery, useSendToWorkers } from '../../features/chat/api';
import { runtimeQuery, workersQuery } from '../../features/workers/api';
import { useI18n } from '../../i18n';
import { postSse } from '../../lib/sse';
import { ErrorLine, Loading } from '../../ui';
import { VoiceButton } from '../../voice';
import { chatReducer, emptyChat } from './chatState';
import type { TabProps } from '../../features/projects/types';

/** Chat with one worker (the reply streams in), or send one message to several workers at once (runs). */
export default function Chat({ project }: TabProps) {
  const { t, number } = useI18n();
  const workers = useQuery(workersQuery(project));
  const [selected, setSelected] = useState<number[]>([]);
  const [text, setText] = useState('');
  const [state, dispatch] = useReducer(chatReducer, emptyChat);
  const abort = useRef<AbortController | null>(null);
  const workerId = selected.length === 1 ? selected[0] : (workers.data?.workers[0]?.id ?? 0);
  const history = useQuery({ ...chatHistoryQuery(project, workerId), enabled: workerId > 0 });
  useEffect(() => {
    if (history.data)
      dispatch({
        type: 'history',
        lines: history.data.messages.map((m) => ({ key: `h${m.id}`, role: m.role, text: m.content })),
      });
  }, [history.data]);
  const runtime = useQuery({ ...runtimeQuery(project, workerId), enabled: workerId > 0 });
  const [sending, setSending] = useState(false);
  const parallel = useSendToWorkers(project, { onSuccess: () => setText('') });
  async function send() {
    if (selected.length > 1) return parallel.mutate({ worker_ids: selected, text });
    const message = text.trim();
    if (!message || !workerId) return;
    setText('');
    setSending(true);
    dispatch({ type: 'send', text: message, key: String(Date.now()) });
    abort.current = new AbortController();
    try {
      await postSse(
        `/api/crm/projects/${encodeURIComponent(project)}/chat`,
        { text: message, worker_id: workerId },
        (e) => dispatch({ type: 'event', event: e.event, data: e.data }),
        abort.current.signal,
      );
    } catch (err) {
      dispatch({
        type: 'failed',
        message: err instanceof ApiFailure ? err.message : t('The reply was interrupted.'),
      });
    } finally {
      setSending(false);
      runtime.refetch();
    }
  }
  if (workers.isPending) return <Loading />;
  const list = workers.data?.workers ?? [];
  if (!list.length) return <p>{t('Add a worker first.')}</p>;
  return (
    <div className="chat">
      <fieldset className="chips">
        <legend>{t('Talk to')}</legend>
        {list.map((w) => (
          <label key={w.id}>
            <input
              type="checkbox"
              checked={selected.includes(w.id) || (selected.length === 0 && w.id === workerId)}
              onChange={(e) =>
                setSelected((cur) => {
                  const base = cur.length ? cur : [workerId];
                  return e.target.checked ? [...new Set([...base, w.id])] : base.filter((x) => x !== w.id);
                })
              }
            />
            {w.label}
          </label>
        ))}
      </fieldset>
      {runtime.data && (
        <p className="muted">
          {t('Tokens today: {used}', { used: number(runtime.data.tokens_today) })}
          {runtime.data.tokens_cap ? ` / ${number(runtime.data.tokens_cap)}` : ''}{' '}
          <meter min={0} max={100} value={runtime.data.tokens_pct} aria-label={t('Share of the daily cap used')} />
          {state.usage && (
            <>
              {' · '}
              {t('last reply: {n} tokens', {
                n: number((state.usage.input_tokens ?? 0) + (state.usage.output_tokens ?? 0)),
              })}
            </>
          )}
        </p>
      )}
      <ol className="transcript" aria-live="polite">
        {state.lines.map((l) => (
          <li key={l.key} className={`msg ${l.role}`}>
            {l.role === 'tool' ? (
              <span className="tool">
                {t('Tool')}: {l.text} {l.error && `(${t('failed')})`}
              </span>
            ) : (
              <>
                <span className="who">{l.role === 'user' ? t('You') : t('Worker')}</span>
                <div className="text">{l.text || (l.streaming ? '…' : '')}</div>
                {l.error && <p className="error">{l.error}</p>}
              </>
            )}
          </li>
        ))}
      </ol>
      {parallel.isSuccess && (
        <p role="status">
          {t('Sent to {n} workers.', { n: parallel.data.run_ids.length })}{' '}
          <Link to={`/projects/${project}/runs`}>{t('Follow the runs')}</Link>
        </p>
      )}
      <ErrorLine error={parallel.error} />
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label htmlFor="chat-text" className="sr-only">
          {t('Message')}
        </label>
        <textarea
          id="chat-text"
          rows={3}
          value={text}
          placeholder={t('Write a message…')}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <VoiceButton onText={(v) => setText((cur) => (cur ? `${cur} ${v}` : v))} />
        {sending ? (
          <button type="button" onClick={() => abort.current?.abort()}>
            {t('Stop')}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!text.trim()}>
            {t('Send')}
          </button>
        )}
      </form>
    </div>
  );
}

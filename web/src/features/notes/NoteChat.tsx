import { useEffect, useReducer, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiFailure } from '../../api/client';
import { Markdown } from '../../components/Markdown';
import { useI18n } from '../../i18n';
import { postSse } from '../../lib/sse';
import { chatBody, noteChatReducer } from './notesChat';
import { Citations } from './Citations';
import { SourcesUsed } from './SourcesUsed';
import type { NoteDetail } from './types';
import { Square } from 'lucide-react';
import { icon } from '../../components/icon';

/** The grounded chat: the earlier messages, the reply streamed in, created issues linked, a choice of sources. */
export function NoteChat({
  project,
  note,
  onDone,
}: {
  project: string;
  note: NoteDetail;
  onDone: () => Promise<void>;
}) {
  const { t, date } = useI18n();
  const [text, setText] = useState('');
  const [selected, setSelected] = useState<number[] | null>(null);
  const [live, dispatch] = useReducer(noteChatReducer, []);
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);
  const ids = note.sources.map((s) => s.id);
  const chosen = selected ?? ids;
  const unfinished = note.sources.some(
    (s) => chosen.includes(s.id) && (s.status === 'queued' || s.status === 'processing'),
  );
  async function send() {
    const message = text.trim();
    if (!message || sending || (selected && !selected.length)) return;
    setText('');
    setFailure(null);
    setSending(true);
    dispatch({ type: 'send', text: message, key: String(Date.now()) });
    abort.current = new AbortController();
    let error: string | null = null;
    try {
      await postSse(
        `/api/crm/projects/${encodeURIComponent(project)}/notes/${note.id}/chat`,
        chatBody(message, selected),
        (e) => {
          if (e.event === 'error') error = String((e.data as { message?: string })?.message ?? '');
          dispatch({ type: 'event', event: e.event, data: e.data });
        },
        abort.current.signal,
      );
    } catch (err) {
      error =
        err instanceof ApiFailure
          ? err.message
          : err instanceof DOMException && err.name === 'AbortError'
            ? t('The reply was stopped.')
            : t('The reply was interrupted.');
    }
    // The note now holds the question and the answer: show them from there.
    await onDone();
    dispatch({ type: 'settle' });
    setFailure(error);
    setSending(false);
  }
  return (
    <div className="note-chat">
      {note.sources.length > 0 && (
        <fieldset className="chips">
          <legend>{t('Answer from')}</legend>
          <label>
            <input
              type="checkbox"
              checked={selected === null}
              onChange={(e) => setSelected(e.target.checked ? null : [])}
            />
            {t('All sources')}
          </label>
          {note.sources.map((s) => (
            <label key={s.id}>
              <input
                type="checkbox"
                checked={chosen.includes(s.id)}
                onChange={(e) => {
                  const next = e.target.checked ? [...new Set([...chosen, s.id])] : chosen.filter((x) => x !== s.id);
                  setSelected(next.length === ids.length && ids.every((i) => next.includes(i)) ? null : next);
                }}
              />
              {s.title}
            </label>
          ))}
        </fieldset>
      )}
      {unfinished && (
        <p className="muted">{t('Some chosen sources are not processed yet: answers use the finished ones.')}</p>
      )}
      <ol className="transcript" aria-live="polite">
        {note.chats.map((m, i) => (
          <li key={`c${i}`} className={`msg ${m.role}`}>
            <span className="who">
              {m.role === 'user' ? t('You') : t('Notes assistant')} · {date(m.created_at)}
            </span>
            {m.role === 'user' ? (
              <div className="text">{m.content}</div>
            ) : (
              <Markdown text={m.content} className="text" />
            )}
            {m.role === 'assistant' && m.citations?.length ? (
              <Citations project={project} noteId={note.id} citations={m.citations} sources={note.sources} />
            ) : (
              <SourcesUsed sources={m.sources} />
            )}
          </li>
        ))}
        {live.map((l) =>
          l.role === 'issue' ? (
            <li key={l.key} className="msg tool">
              {t('Created issue')}{' '}
              <Link to={`/projects/${project}/issues`}>
                #{l.issue!.id} {l.issue!.title}
              </Link>{' '}
              ({l.issue!.priority})
            </li>
          ) : (
            <li key={l.key} className={`msg ${l.role}`}>
              <span className="who">{l.role === 'user' ? t('You') : t('Notes assistant')}</span>
              {l.role !== 'user' && l.text ? (
                <Markdown text={l.text} className="text" />
              ) : (
                <div className="text">{l.text || (l.streaming ? '…' : '')}</div>
              )}
              {l.error && <p className="error">{l.error}</p>}
              {l.citations?.length ? (
                <Citations project={project} noteId={note.id} citations={l.citations} sources={note.sources} />
              ) : (
                l.sources && <SourcesUsed sources={l.sources} />
              )}
            </li>
          ),
        )}
      </ol>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label htmlFor="note-question" className="sr-only">
          {t('Question')}
        </label>
        <textarea
          id="note-question"
          rows={3}
          maxLength={8000}
          value={text}
          placeholder={t('Ask about the sources…')}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
        />
        {sending ? (
          <button type="button" onClick={() => abort.current?.abort()}>
            <Square {...icon} />
            {t('Stop')}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!text.trim() || (selected !== null && !selected.length)}>
            {t('Ask')}
          </button>
        )}
      </form>
    </div>
  );
}

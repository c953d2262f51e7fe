import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useReducer, useRef, useState, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiFailure, must, type paths } from '../../api/client';
import { msg, useI18n } from '../../i18n';
import { postSse } from '../../lib/sse';
import { ErrorLine, Field, Loading, Modal, Select, TextArea } from '../../ui';
import { chatBody, noteChatReducer, type GroundSource } from './notesChat';
import { followProgress, uploadSource } from './notesTransfer';
import { ACCEPT, checkFile, formatBytes, MB, sourcesToFollow } from './notesUpload';
import type { TabProps } from '../../features/projects/types';

type NoteDetail = paths['/api/crm/projects/{name}/notes/{id}']['get']['responses'][200]['content']['application/json'];
type Source = NoteDetail['sources'][number];

const TYPE_LABELS: Record<Source['source_type'], string> = {
  youtube: msg('YouTube video'),
  web: msg('Web page'),
  video: msg('Video'),
  audio: msg('Audio'),
  pdf: msg('PDF'),
  docx: msg('DOCX'),
  txt: msg('Text'),
  markdown: msg('Markdown'),
  image: msg('Image'),
};
const STATUS_LABELS: Record<Source['status'], string> = {
  queued: msg('Queued'),
  processing: msg('Processing'),
  done: msg('Done'),
  error: msg('Failed'),
};

/** A note id from the `?note=` query: a positive integer, else null. */
export function noteIdOf(value: string | null): number | null {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : null;
}

/** A yes/no dialog for a destructive step. */
function Confirm({
  open,
  title,
  children,
  onConfirm,
  onCancel,
  busy,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
}) {
  const { t } = useI18n();
  return (
    <Modal open={open} onOpenChange={(o) => !o && onCancel()} title={title}>
      {children}
      <div className="actions">
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {t('Delete')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('Cancel')}
        </button>
      </div>
    </Modal>
  );
}

/** The project's research notes: the list, or the note named by `?note=` (kept on a reload). */
export default function Notes({ project }: TabProps) {
  const [params, setParams] = useSearchParams();
  const noteId = noteIdOf(params.get('note'));
  const open = (id: number | null) => setParams(id ? { note: String(id) } : {});
  return noteId ? (
    <NoteView project={project} id={noteId} onBack={() => open(null)} />
  ) : (
    <NoteList project={project} onOpen={open} />
  );
}

function NoteList({ project, onOpen }: { project: string; onOpen: (id: number) => void }) {
  const { t, date } = useI18n();
  const qc = useQueryClient();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [deleting, setDeleting] = useState<{ id: number; title: string } | null>(null);
  const notes = useQuery({
    queryKey: ['notes', project],
    queryFn: () => must(api.GET('/api/crm/projects/{name}/notes', { params: { path: { name: project } } })),
  });
  const create = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/crm/projects/{name}/notes', {
          params: { path: { name: project } },
          body: { title: title.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
        }),
      ),
    onSuccess: (data) => {
      setTitle('');
      setDescription('');
      void qc.invalidateQueries({ queryKey: ['notes', project] });
      onOpen(data.id);
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/notes/{id}', { params: { path: { name: project, id } } })),
    onSuccess: () => {
      setDeleting(null);
      void qc.invalidateQueries({ queryKey: ['notes', project] });
    },
  });
  return (
    <div className="notes split">
      <div>
        <h2>{t('Research notes')}</h2>
        <ErrorLine error={notes.error} />
        {notes.isPending ? (
          <Loading />
        ) : notes.data?.length ? (
          <ul className="list note-list">
            {notes.data.map((n) => (
              <li key={n.id}>
                <button type="button" className="link" onClick={() => onOpen(n.id)}>
                  {n.title}
                </button>{' '}
                <span className="muted">
                  {t('{n} sources', { n: n.source_count })} · {date(n.created_at)}
                </span>
                {n.description && <p className="muted clip">{n.description}</p>}
                <button
                  type="button"
                  className="danger"
                  aria-label={t('Delete the note {title}', { title: n.title })}
                  onClick={() => setDeleting({ id: n.id, title: n.title })}
                >
                  {t('Delete')}
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">{t('No notes yet: create one to collect sources and ask about them.')}</p>
        )}
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <h2>{t('New note')}</h2>
        <Field label={t('Title')} required maxLength={300} value={title} onChange={(e) => setTitle(e.target.value)} />
        <TextArea
          label={t('Description')}
          rows={3}
          maxLength={20000}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <ErrorLine error={create.error} />
        <button type="submit" className="primary" disabled={create.isPending || !title.trim()}>
          {t('Create note')}
        </button>
      </form>
      <Confirm
        open={!!deleting}
        title={t('Delete the note?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting.id)}
      >
        <p>
          {t('“{title}” goes with its sources, chat and issue links. The issues themselves stay.', {
            title: deleting?.title ?? '',
          })}
        </p>
        <ErrorLine error={remove.error} />
      </Confirm>
    </div>
  );
}

function NoteView({ project, id, onBack }: { project: string; id: number; onBack: () => void }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const [deleting, setDeleting] = useState(false);
  const key = ['note', project, id];
  const note = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/api/crm/projects/{name}/notes/{id}', { params: { path: { name: project, id } } })),
    retry: false,
  });
  const remove = useMutation({
    mutationFn: () =>
      must(api.DELETE('/api/crm/projects/{name}/notes/{id}', { params: { path: { name: project, id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['notes', project] });
      onBack();
    },
  });
  const refresh = () => qc.invalidateQueries({ queryKey: key });
  const back = (
    <button type="button" className="link" onClick={onBack}>
      ← {t('All notes')}
    </button>
  );
  if (note.isPending) return <Loading />;
  if (note.isError)
    return (
      <div>
        {back}
        <ErrorLine error={note.error} />
      </div>
    );
  const n = note.data;
  const follow = sourcesToFollow(n.sources);
  return (
    <div className="note">
      {back}
      <div className="note-head">
        <h2>{n.title}</h2>
        <button type="button" className="danger" onClick={() => setDeleting(true)}>
          {t('Delete note')}
        </button>
      </div>
      {n.description && <p className="pre">{n.description}</p>}
      <div className="split">
        <section aria-labelledby="note-sources">
          <h3 id="note-sources">{t('Sources')}</h3>
          {n.sources.length ? (
            <ul className="list note-sources">
              {n.sources.map((s) => (
                <SourceRow
                  key={s.id}
                  project={project}
                  noteId={id}
                  source={s}
                  follow={follow.has(s.id)}
                  onChanged={refresh}
                />
              ))}
            </ul>
          ) : (
            <p className="muted">{t('No sources yet.')}</p>
          )}
          <AddSources project={project} noteId={id} onAdded={refresh} />
        </section>
        <section aria-labelledby="note-chat">
          <h3 id="note-chat">{t('Ask the sources')}</h3>
          <NoteChat project={project} note={n} onDone={refresh} />
          <h3>{t('Linked issues')}</h3>
          {n.issue_links.length ? (
            <ul className="list">
              {n.issue_links.map((l) => (
                <li key={l.issue_id}>
                  <Link to={`/projects/${project}/issues`}>
                    #{l.issue_id} {l.title}
                  </Link>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">{t('Issues the chat creates are linked here.')}</p>
          )}
        </section>
      </div>
      <Confirm
        open={deleting}
        title={t('Delete the note?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>
          {t('“{title}” goes with its sources, chat and issue links. The issues themselves stay.', { title: n.title })}
        </p>
        <ErrorLine error={remove.error} />
      </Confirm>
    </div>
  );
}

/** One source: type, name, size, status (followed live while processing), rename, delete, its text. */
function SourceRow({
  project,
  noteId,
  source: s,
  follow,
  onChanged,
}: {
  project: string;
  noteId: number;
  source: Source;
  /** Follow its processing live (queued or processing, and among the few followed at once). */
  follow: boolean;
  onChanged: () => void;
}) {
  const { t, date } = useI18n();
  const [step, setStep] = useState<string | null>(null);
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState('');
  const [deleting, setDeleting] = useState(false);
  const [reading, setReading] = useState(false);
  const path = { name: project, id: noteId, sourceId: s.id };
  const pending = s.status === 'queued' || s.status === 'processing';
  useEffect(() => {
    if (!follow) return;
    const abort = new AbortController();
    followProgress(project, noteId, s.id, (p) => setStep(p.message), abort.signal)
      .catch(() => {})
      .finally(() => {
        if (!abort.signal.aborted) onChanged();
      });
    return () => abort.abort();
  }, [follow, project, noteId, s.id]);
  const rename = useMutation({
    mutationFn: () =>
      must(
        api.PATCH('/api/crm/projects/{name}/notes/{id}/sources/{sourceId}', {
          params: { path },
          body: { title: name.trim() || null },
        }),
      ),
    onSuccess: () => {
      setRenaming(false);
      onChanged();
    },
  });
  const remove = useMutation({
    mutationFn: () => must(api.DELETE('/api/crm/projects/{name}/notes/{id}/sources/{sourceId}', { params: { path } })),
    onSuccess: () => {
      setDeleting(false);
      onChanged();
    },
  });
  return (
    <li className="note-source" data-source={s.id}>
      <div>
        <strong>{s.title}</strong>{' '}
        <span className={`badge src-${s.status}`} data-status={s.status}>
          {t(STATUS_LABELS[s.status])}
        </span>
      </div>
      <p className="muted">
        {t(TYPE_LABELS[s.source_type])}
        {s.size_bytes != null && ` · ${formatBytes(s.size_bytes)}`}
        {s.duration_seconds != null && ` · ${t('{n} s', { n: s.duration_seconds })}`}
        {' · '}
        {date(s.created_at)}
        {s.url && (
          <>
            {' · '}
            <a href={s.url} target="_blank" rel="noreferrer noopener">
              {t('address')}
            </a>
          </>
        )}
      </p>
      {pending && step && (
        <p className="muted" aria-live="polite">
          {step}
        </p>
      )}
      {s.status === 'error' && s.error && <p className="error">{s.error}</p>}
      <div className="actions">
        {s.status === 'done' && s.content_text != null && (
          <button type="button" onClick={() => setReading(true)}>
            {t('Show text')}
          </button>
        )}
        <button
          type="button"
          aria-expanded={renaming}
          onClick={() => {
            setName(s.title);
            setRenaming((r) => !r);
          }}
        >
          {t('Rename')}
        </button>
        <button
          type="button"
          className="danger"
          aria-label={t('Delete the source {title}', { title: s.title })}
          onClick={() => setDeleting(true)}
        >
          {t('Delete')}
        </button>
      </div>
      {renaming && (
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            rename.mutate();
          }}
        >
          <Field
            label={t('New name')}
            hint={t('Leave empty for the default name.')}
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <button type="submit" className="primary" disabled={rename.isPending}>
            {t('Save')}
          </button>
          <ErrorLine error={rename.error} />
        </form>
      )}
      <Modal open={reading} onOpenChange={setReading} title={s.title}>
        {reading && <SourceText title={s.title} text={s.content_text ?? ''} />}
      </Modal>
      <Confirm
        open={deleting}
        title={t('Delete the source?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(false)}
        onConfirm={() => remove.mutate()}
      >
        <p>{t('“{title}” goes with its file and text.', { title: s.title })}</p>
        <ErrorLine error={remove.error} />
      </Confirm>
    </li>
  );
}

/** Characters of a source's text shown at once (a long transcript stays responsive); the rest is downloadable. */
const TEXT_PREVIEW = 100_000;

/** A source's extracted text: the first 100,000 characters, and the whole as a .txt download. */
function SourceText({ title, text }: { title: string; text: string }) {
  const { t, number } = useI18n();
  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const base = title.replace(/[^\p{L}\p{N}._-]+/gu, '_').slice(0, 80) || 'source';
    const name = /\.txt$/i.test(base) ? base : `${base}.txt`;
    Object.assign(document.createElement('a'), { href: url, download: name }).click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  return (
    <>
      {text.length > TEXT_PREVIEW && (
        <p className="muted">
          {t('The first {shown} of {total} characters.', {
            shown: number(TEXT_PREVIEW),
            total: number(text.length),
          })}
        </p>
      )}
      <pre className="source-text" tabIndex={0} aria-label={t('Extracted text')}>
        {text.length > TEXT_PREVIEW ? text.slice(0, TEXT_PREVIEW) : text}
      </pre>
      <button type="button" onClick={download}>
        {t('Download the text')}
      </button>
    </>
  );
}

/** Adding sources: a file (with upload progress), a web page or YouTube address, a project file. */
function AddSources({ project, noteId, onAdded }: { project: string; noteId: number; onAdded: () => void }) {
  const { t } = useI18n();
  const [progress, setProgress] = useState<{ name: string; percent: number } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [uploadError, setUploadError] = useState<unknown>(null);
  const [kind, setKind] = useState<'web' | 'youtube'>('web');
  const [url, setUrl] = useState('');
  const [filePath, setFilePath] = useState('');
  const abort = useRef<AbortController | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => () => abort.current?.abort(), []);
  async function upload(file: File) {
    setProblem(null);
    setUploadError(null);
    const check = checkFile(file.name, file.size);
    if (!check.ok) {
      setProblem(
        check.code === 'unsupported_type'
          ? t('This type of file cannot be a source.')
          : check.code === 'empty_file'
            ? t('The file is empty.')
            : t('The file is too large: at most {n} MB for this type.', { n: Math.round((check.limit ?? 0) / MB) }),
      );
      return;
    }
    abort.current = new AbortController();
    setProgress({ name: file.name, percent: 0 });
    try {
      await uploadSource(
        project,
        noteId,
        file,
        (percent) => setProgress({ name: file.name, percent }),
        abort.current.signal,
      );
      onAdded();
    } catch (err) {
      if (err instanceof DOMException && err.name === 'AbortError') setProblem(t('The upload was cancelled.'));
      else setUploadError(err);
    } finally {
      setProgress(null);
      if (input.current) input.current.value = '';
    }
  }
  const addUrl = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/crm/projects/{name}/notes/{id}/sources', {
          params: { path: { name: project, id: noteId } },
          body: { source_type: kind, url: url.trim() },
        }),
      ),
    onSuccess: () => {
      setUrl('');
      onAdded();
    },
  });
  const addPath = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/crm/projects/{name}/notes/{id}/sources', {
          params: { path: { name: project, id: noteId } },
          body: { file_path: filePath.trim() },
        }),
      ),
    onSuccess: () => {
      setFilePath('');
      onAdded();
    },
  });
  return (
    <div className="add-sources">
      <h4>{t('Add a source')}</h4>
      <div className="field">
        <label htmlFor="note-file">{t('File')}</label>
        <input
          id="note-file"
          ref={input}
          type="file"
          accept={ACCEPT}
          disabled={!!progress}
          aria-describedby="note-file-hint"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void upload(f);
          }}
        />
        <small id="note-file-hint" className="hint">
          {t(
            'Video (up to 2 GB), audio (500 MB), PDF (100 MB), DOCX (50 MB), text, Markdown and images (20 MB). Large files are sent in parts.',
          )}
        </small>
      </div>
      {progress && (
        <div className="upload-progress" role="status">
          <label htmlFor="note-upload-progress">{t('Uploading {name}', { name: progress.name })}</label>
          <progress id="note-upload-progress" max={100} value={progress.percent} />
          <span>{progress.percent}%</span>
          <button type="button" onClick={() => abort.current?.abort()}>
            {t('Cancel')}
          </button>
        </div>
      )}
      {problem && (
        <p role="alert" className="error">
          {problem}
        </p>
      )}
      <ErrorLine error={uploadError} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          addUrl.mutate();
        }}
      >
        <Select
          label={t('Address type')}
          value={kind}
          onChange={(v) => setKind(v as 'web' | 'youtube')}
          options={[
            { value: 'web', label: t('Web page') },
            { value: 'youtube', label: t('YouTube video') },
          ]}
        />
        <Field
          label={kind === 'web' ? t('Web page address') : t('YouTube address')}
          type="url"
          required
          maxLength={2048}
          placeholder="https://"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <ErrorLine error={addUrl.error} />
        <button type="submit" disabled={addUrl.isPending || !url.trim()}>
          {t('Add address')}
        </button>
      </form>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          addPath.mutate();
        }}
      >
        <Field
          label={t('Project file path')}
          required
          maxLength={1000}
          placeholder="docs/brief.pdf"
          value={filePath}
          onChange={(e) => setFilePath(e.target.value)}
        />
        <ErrorLine error={addPath.error} />
        <button type="submit" disabled={addPath.isPending || !filePath.trim()}>
          {t('Add project file')}
        </button>
      </form>
    </div>
  );
}

function SourcesUsed({ sources }: { sources: GroundSource[] }) {
  const { t } = useI18n();
  if (!sources.length) return null;
  return (
    <p className="muted">
      {t('Sources: {list}', { list: sources.map((s) => `[S${s.source_id}] ${s.title}`).join(', ') })}
    </p>
  );
}

/** The grounded chat: the earlier messages, the reply streamed in, created issues linked, a choice of sources. */
function NoteChat({ project, note, onDone }: { project: string; note: NoteDetail; onDone: () => Promise<void> }) {
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
            <div className="text">{m.content}</div>
            <SourcesUsed sources={m.sources} />
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
              <div className="text">{l.text || (l.streaming ? '…' : '')}</div>
              {l.error && <p className="error">{l.error}</p>}
              {l.sources && <SourcesUsed sources={l.sources} />}
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

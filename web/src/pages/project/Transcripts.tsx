/**
 * Meeting transcripts of a project: upload a recording (with upload progress), follow its job's steps live,
 * list the transcripts, and read one (`?id=` in the URL): text, summary and, for videos, the frames.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiFailure, must } from '../../api/client';
import { msg, useI18n } from '../../i18n';
import { getSse } from '../../lib/sse';
import { uploadWithProgress } from '../../lib/upload';
import { ErrorLine, Field, Loading } from '../../ui';
import type { TabProps } from '../../features/projects/types';
import {
  ACCEPT_ATTR,
  clock,
  isTerminal,
  STATUS_LABELS,
  stepStates,
  summaryFailed,
  uploadMime,
  type ProgressEvent,
  type StepState,
} from './transcriptSteps';

const MARKS: Record<StepState, string> = { done: '✓', current: '●', failed: '✕', pending: '○' };
const STATE_LABELS: Record<StepState, string> = {
  done: msg('done'),
  current: msg('in progress'),
  failed: msg('failed'),
  pending: msg('to come'),
};

/** The job's steps as an ordered list: done, current (with its percent), failed (with the reason), to come. */
function Steps({ kind, embed, event }: { kind: 'audio' | 'video'; embed: boolean; event: ProgressEvent }) {
  const { t, number } = useI18n();
  const steps = stepStates(kind, embed, event);
  return (
    <>
      <ol className="tr-steps" aria-label={t('Steps')}>
        {steps.map((s) => (
          <li key={s.id} className={`tr-step ${s.state}`} aria-current={s.state === 'current' ? 'step' : undefined}>
            <span className="tr-mark" aria-hidden="true">
              {MARKS[s.state]}
            </span>{' '}
            <span>{t(s.label)}</span> <span className="sr-only">({t(STATE_LABELS[s.state])})</span>
            {s.state === 'current' && event.status !== 'queued' && (
              <span className="muted"> · {number(event.progress_pct)} %</span>
            )}
            {s.state === 'failed' && event.error && (
              <p role="alert" className="error">
                {event.error}
              </p>
            )}
          </li>
        ))}
      </ol>
      {!isTerminal(event.status) && (
        <progress className="tr-progress" max={100} value={event.progress_pct} aria-label={t('Progress')} />
      )}
    </>
  );
}

/** Pick a recording, name it, upload it with a progress bar; `onQueued` gets the new transcript's id. */
function Upload({ project, onQueued }: { project: string; onQueued: (id: number) => void }) {
  const { t, number } = useI18n();
  const [file, setFile] = useState<File | null>(null);
  const [filename, setFilename] = useState('');
  const [embed, setEmbed] = useState(true);
  const [sent, setSent] = useState<{ loaded: number; total: number } | null>(null);
  const abort = useRef<AbortController | null>(null);
  // A new key empties the file input after an upload.
  const [inputKey, setInputKey] = useState(0);
  const upload = useMutation({
    mutationFn: async () => {
      if (!file) throw new ApiFailure(400, { error: 'file_required', message: t('Choose a recording first.') });
      const mime = uploadMime(filename, file.type);
      if (!mime)
        throw new ApiFailure(400, {
          error: 'invalid_extension',
          message: t('The file name must end in mp3, wav, m4a, aac, ogg, opus, flac, mp4, mov, webm or mkv.'),
        });
      const fd = new FormData();
      fd.append('filename', filename.trim());
      fd.append('embed_to_rag', String(embed));
      fd.append('file', mime === file.type ? file : new File([file], file.name, { type: mime }), file.name);
      abort.current = new AbortController();
      setSent({ loaded: 0, total: file.size });
      return uploadWithProgress<{ transcript_id: number; job_id: string }>(
        `/api/crm/projects/${encodeURIComponent(project)}/transcripts/upload`,
        fd,
        (loaded, total) => setSent({ loaded, total: total || file.size }),
        abort.current.signal,
      );
    },
    onSuccess: (q) => {
      setFile(null);
      setFilename('');
      setInputKey((k) => k + 1);
      onQueued(q.transcript_id);
    },
    onSettled: () => {
      setSent(null);
      abort.current = null;
    },
  });
  const aborted = upload.error instanceof ApiFailure && upload.error.body.error === 'aborted';
  const pct = sent && sent.total ? Math.min(100, Math.round((100 * sent.loaded) / sent.total)) : 0;
  return (
    <form
      className="card tr-upload"
      onSubmit={(e) => {
        e.preventDefault();
        upload.mutate();
      }}
    >
      <h2>{t('Upload a recording')}</h2>
      <Field
        key={inputKey}
        label={t('Recording (audio or video)')}
        hint={t('mp3, wav, m4a, aac, ogg, opus, flac, mp4, mov, webm or mkv; up to 1 GB.')}
        type="file"
        accept={ACCEPT_ATTR}
        required
        onChange={(e) => {
          const f = e.target.files?.[0] ?? null;
          setFile(f);
          if (f) setFilename(f.name);
        }}
      />
      <Field
        label={t('File name')}
        required
        maxLength={255}
        value={filename}
        onChange={(e) => setFilename(e.target.value)}
      />
      <label className="radio">
        <input type="checkbox" checked={embed} onChange={(e) => setEmbed(e.target.checked)} />{' '}
        {t('Add the transcript to the search index of the project')}
      </label>
      {sent && (
        <p className="tr-sent">
          <progress max={100} value={pct} aria-label={t('Upload progress')} />{' '}
          <span aria-live="polite">
            {t('Uploaded {pct} % of {size}', { pct: number(pct), size: size(sent.total, number) })}
          </span>
        </p>
      )}
      {/* No answer (status 0): the connection broke; ErrorLine says so in general words. */}
      <ErrorLine
        error={
          aborted ? null : upload.error instanceof ApiFailure && upload.error.status === 0 ? new Error() : upload.error
        }
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={upload.isPending}>
          {upload.isPending ? t('Uploading…') : t('Upload')}
        </button>
        {upload.isPending && (
          <button type="button" onClick={() => abort.current?.abort()}>
            {t('Cancel')}
          </button>
        )}
      </div>
    </form>
  );
}

/** A byte count as B, KB, MB or GB. */
function size(bytes: number, number: (n: number) => string): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${number(Math.round(v * 10) / 10)} ${units[i]}`;
}

function TranscriptList({ project }: { project: string }) {
  const { t, date } = useI18n();
  const list = useInfiniteQuery({
    queryKey: ['transcripts', project],
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam }) =>
      must(
        api.GET('/api/crm/projects/{name}/transcripts', {
          params: { path: { name: project }, query: pageParam ? { cursor: pageParam } : {} },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.items.some((i) => !isTerminal(i.status))) ? 5000 : false,
  });
  if (list.isPending) return <Loading />;
  if (list.isError) return <ErrorLine error={list.error} />;
  const items = list.data.pages.flatMap((p) => p.items);
  return (
    <section aria-labelledby="tr-list">
      <h2 id="tr-list">{t('Transcripts')}</h2>
      {items.length === 0 ? (
        <p className="muted">{t('No transcripts yet. Upload a meeting recording above.')}</p>
      ) : (
        <ul className="list tr-list">
          {items.map((i) => (
            <li key={i.transcript_id}>
              <Link to={`?id=${i.transcript_id}`}>{i.filename}</Link>{' '}
              <span className={`badge tr-status ${i.status}`}>{t(STATUS_LABELS[i.status] ?? i.status)}</span>
              <span className="muted">
                {' '}
                · {i.kind === 'video' ? t('Video') : t('Audio')} ·{' '}
                <time dateTime={i.created_at}>{date(i.created_at)}</time>
              </span>
              {i.tldr && <p className="tr-tldr">{i.tldr}</p>}
              {i.status === 'failed' && i.error && <p className="error">{i.error}</p>}
            </li>
          ))}
        </ul>
      )}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {t('Show more')}
        </button>
      )}
    </section>
  );
}

function TranscriptDetail({ project, id }: { project: string; id: number }) {
  const { t, date, number } = useI18n();
  const qc = useQueryClient();
  const path = { name: project, id };
  const key = ['transcript', project, id];
  const detail = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/api/crm/projects/{name}/transcripts/{id}', { params: { path } })),
    // A fallback to the stream while the job runs.
    refetchInterval: (q) => (q.state.data && !isTerminal(q.state.data.status) ? 5000 : false),
  });
  // The stream's latest event and when it came; the newer of it and the fetched row is shown.
  const [live, setLive] = useState<{ event: ProgressEvent; at: number } | null>(null);
  const [streamError, setStreamError] = useState<unknown>(null);
  const jobId = detail.data?.job_id;
  const terminal = detail.data ? isTerminal(detail.data.status) : true;
  useEffect(() => {
    if (!jobId || terminal) return;
    const ac = new AbortController();
    let last = '';
    setStreamError(null);
    getSse(
      `/api/crm/projects/${encodeURIComponent(project)}/transcripts/job/${encodeURIComponent(jobId)}/progress`,
      (e) => {
        if (e.event !== 'progress' && e.event !== 'end') return;
        const p = e.data as ProgressEvent;
        setLive({ event: p, at: Date.now() });
        // A new status may bring the text or the summary: read the transcript again.
        if (p.status !== last) {
          last = p.status;
          void qc.invalidateQueries({ queryKey: ['transcript', project, id] });
          if (isTerminal(p.status)) void qc.invalidateQueries({ queryKey: ['transcripts', project] });
        }
      },
      ac.signal,
    ).catch((err) => {
      if (!ac.signal.aborted) setStreamError(err);
    });
    return () => ac.abort();
  }, [jobId, terminal, project, id, qc]);
  const retry = useMutation({
    mutationFn: () => must(api.POST('/api/crm/projects/{name}/transcripts/{id}/retry-summary', { params: { path } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: key }),
  });
  const back = <Link to="?">{t('All transcripts')}</Link>;
  if (detail.isPending) return <Loading />;
  if (detail.isError)
    return (
      <div>
        {back}
        <ErrorLine error={detail.error} />
      </div>
    );
  const d = detail.data;
  const event: ProgressEvent = live && live.at >= detail.dataUpdatedAt && !isTerminal(d.status) ? live.event : d;
  const s = d.summary_json;
  return (
    <article className="tr-detail">
      <p>{back}</p>
      <h2>{d.filename}</h2>
      <p className="muted">
        {d.kind === 'video' ? t('Video') : t('Audio')} · {size(d.size_bytes, number)} ·{' '}
        <time dateTime={d.created_at}>{date(d.created_at)}</time> · {t(STATUS_LABELS[d.status] ?? d.status)}
        {!d.embed_to_rag && ` · ${t('not in the search index')}`}
      </p>
      <section aria-labelledby="tr-steps">
        <h3 id="tr-steps">{t('Progress')}</h3>
        <Steps kind={d.kind} embed={d.embed_to_rag} event={event} />
        {event.step_label && !isTerminal(event.status) && (
          <p className="muted" aria-live="polite">
            {event.step_label}
          </p>
        )}
        <ErrorLine error={streamError} />
        {summaryFailed(event) && (
          <div className="actions">
            <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending}>
              {t('Retry the summary')}
            </button>
            <ErrorLine error={retry.error} />
          </div>
        )}
      </section>
      {s && (
        <section aria-labelledby="tr-summary" className="tr-summary">
          <h3 id="tr-summary">{t('Summary')}</h3>
          <p>{s.tldr}</p>
          {s.key_points.length > 0 && (
            <>
              <h4>{t('Key points')}</h4>
              <ul>
                {s.key_points.map((k, i) => (
                  <li key={i}>{k}</li>
                ))}
              </ul>
            </>
          )}
          {s.action_items.length > 0 && (
            <>
              <h4>{t('Action items')}</h4>
              <ul>
                {s.action_items.map((a, i) => (
                  <li key={i}>
                    {a.task} <span className="muted">— {a.owner ?? t('no owner')}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {s.decisions.length > 0 && (
            <>
              <h4>{t('Decisions')}</h4>
              <ul>
                {s.decisions.map((k, i) => (
                  <li key={i}>{k}</li>
                ))}
              </ul>
            </>
          )}
          {s.topics.length > 0 && (
            <>
              <h4>{t('Topics')}</h4>
              <ul className="tr-topics">
                {s.topics.map((k, i) => (
                  <li key={i}>{k}</li>
                ))}
              </ul>
            </>
          )}
          <p className="muted">
            {t('Summarized by {model} on {date}', { model: s.model, date: date(s.generated_at) })}
          </p>
        </section>
      )}
      {d.kind === 'video' && d.frames_json && d.frames_json.length > 0 && (
        <section aria-labelledby="tr-frames">
          <h3 id="tr-frames">{t('What the video showed')}</h3>
          <ol className="tr-frames">
            {d.frames_json.map((f, i) => (
              <li key={i}>
                <time>{clock(f.ts_ms)}</time> {f.description ?? <span className="muted">{t('Not described yet')}</span>}
              </li>
            ))}
          </ol>
        </section>
      )}
      <section aria-labelledby="tr-text">
        <h3 id="tr-text">{t('Transcript')}</h3>
        {d.transcript_text ? (
          <div className="pre tr-text">{d.transcript_text}</div>
        ) : (
          <p className="muted">{t('No text yet.')}</p>
        )}
      </section>
    </article>
  );
}

/** The Transcripts tab: the upload form and the list, or one transcript when `?id=` is set. */
export default function Transcripts({ project }: TabProps) {
  const [params, setParams] = useSearchParams();
  const id = Number(params.get('id'));
  if (Number.isInteger(id) && id > 0) return <TranscriptDetail key={id} project={project} id={id} />;
  return (
    <div>
      <Upload project={project} onQueued={(tid) => setParams({ id: String(tid) })} />
      <TranscriptList project={project} />
    </div>
  );
}

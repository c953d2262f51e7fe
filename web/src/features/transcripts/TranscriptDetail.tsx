import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useI18n } from '../../i18n';
import { getSse } from '../../lib/sse';
import { ErrorLine, Loading } from '../../ui';
import { transcriptKeys, transcriptQuery, useRetrySummary } from './api';
import { Steps } from './Steps';
import { clock, isTerminal, sizeText, STATUS_LABELS, summaryFailed, type ProgressEvent } from './transcriptSteps';

/** One transcript: its job's steps followed live, the summary, the video's frames and the text. */
export function TranscriptDetail({ project, id }: { project: string; id: number }) {
  const { t, date, number } = useI18n();
  const qc = useQueryClient();
  const detail = useQuery(transcriptQuery(project, id));
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
          void qc.invalidateQueries({ queryKey: transcriptKeys.one(project, id) });
          if (isTerminal(p.status)) void qc.invalidateQueries({ queryKey: transcriptKeys.list(project) });
        }
      },
      ac.signal,
    ).catch((err) => {
      if (!ac.signal.aborted) setStreamError(err);
    });
    return () => ac.abort();
  }, [jobId, terminal, project, id, qc]);
  const retry = useRetrySummary(project, id);
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
        {d.kind === 'video' ? t('Video') : t('Audio')} · {sizeText(d.size_bytes, number)} ·{' '}
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

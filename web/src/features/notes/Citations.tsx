import { useEffect, useRef, useState } from 'react';
import { authHeaders } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Modal } from '../../ui';
import { type Citation, citedLines, placeLabel } from './notesChat';
import type { Source } from './types';

/** The cited passages of an answer as chips (`S1 · atlas.pdf · p. 12`); a click opens the place in its source. */
export function Citations({
  project,
  noteId,
  citations,
  sources,
}: {
  project: string;
  noteId: number;
  citations: Citation[] | undefined;
  sources: Source[];
}) {
  const { t } = useI18n();
  const [open, setOpen] = useState<Citation | null>(null);
  if (!citations?.length) return null;
  const sourceOf = (c: Citation) => sources.find((s) => s.id === c.source_id);
  return (
    <div className="citations">
      <span className="muted">{t('Cited:')}</span>
      <ul className="chips">
        {citations.map((c) => {
          const s = sourceOf(c);
          const place = placeLabel(c.location, t);
          return (
            <li key={c.marker}>
              <button
                type="button"
                className="chip citation"
                data-marker={c.marker}
                title={c.quote}
                onClick={() => setOpen(c)}
              >
                <strong>{c.marker}</strong> {s?.title ?? t('a removed source')}
                {place && ` · ${place}`}
              </button>
            </li>
          );
        })}
      </ul>
      {open && (
        <Modal
          open
          onOpenChange={(o) => !o && setOpen(null)}
          title={`${open.marker} · ${sourceOf(open)?.title ?? t('a removed source')}${placeLabel(open.location, t) ? ` · ${placeLabel(open.location, t)}` : ''}`}
        >
          <CitationPlace project={project} noteId={noteId} citation={open} source={sourceOf(open)} />
        </Modal>
      )}
    </div>
  );
}

/** The file of a source as an object URL (fetched with the signed-in user's token), revoked when unmounted. */
function useSourceFile(project: string, noteId: number, sourceId: number, wanted: boolean) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    if (!wanted) return;
    const abort = new AbortController();
    let made: string | null = null;
    fetch(`/api/crm/projects/${encodeURIComponent(project)}/notes/${noteId}/sources/${sourceId}/file`, {
      headers: authHeaders(),
      signal: abort.signal,
    })
      .then(async (res) => {
        if (!res.ok) throw new Error(((await res.json().catch(() => ({}))) as { message?: string }).message ?? '');
        made = URL.createObjectURL(await res.blob());
        setUrl(made);
      })
      .catch((err: Error) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => {
      abort.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [project, noteId, sourceId, wanted]);
  return { url, error };
}

/**
 * The cited place: a PDF at the page (the browser's PDF viewer, `#page=N`), a recording at the second (the player
 * seeks there), a text source with the cited lines marked and scrolled into view; the quoted span below.
 */
function CitationPlace({
  project,
  noteId,
  citation: c,
  source,
}: {
  project: string;
  noteId: number;
  citation: Citation;
  source: Source | undefined;
}) {
  const { t } = useI18n();
  const kind = source?.source_type;
  const media = kind === 'audio' || kind === 'video';
  const file = useSourceFile(project, noteId, c.source_id, !!source && (kind === 'pdf' || media));
  const player = useRef<HTMLMediaElement | null>(null);
  const mark = useRef<HTMLElement | null>(null);
  const start = (c.location.start_ms ?? 0) / 1000;
  useEffect(() => {
    mark.current?.scrollIntoView({ block: 'center' });
  }, [source?.id]);
  if (!source) return <p className="muted">{t('The source was removed.')}</p>;
  const quote = c.quote && (
    <blockquote className="citation-quote" data-testid="citation-quote">
      {c.quote}
    </blockquote>
  );
  if (kind === 'pdf' || media) {
    const seek = (el: HTMLMediaElement) => {
      if (Math.abs(el.currentTime - start) > 0.5) el.currentTime = start;
    };
    return (
      <div className="citation-place">
        <ErrorLine error={file.error} />
        {!file.url && !file.error && <p className="muted">{t('Loading…')}</p>}
        {file.url && kind === 'pdf' && (
          <iframe
            className="citation-pdf"
            title={source.title}
            data-page={c.location.page ?? 1}
            src={`${file.url}#page=${c.location.page ?? 1}`}
          />
        )}
        {file.url && kind === 'audio' && (
          <audio
            ref={(el) => {
              player.current = el;
            }}
            controls
            src={file.url}
            data-start={start}
            onLoadedMetadata={(e) => seek(e.currentTarget)}
          />
        )}
        {file.url && kind === 'video' && (
          <video
            ref={(el) => {
              player.current = el;
            }}
            controls
            src={file.url}
            data-start={start}
            onLoadedMetadata={(e) => seek(e.currentTarget)}
          />
        )}
        {quote}
      </div>
    );
  }
  const text = source.content_text ?? '';
  const lines = citedLines(text, c);
  const all = text.split('\n');
  const from = lines ? Math.max(0, lines[0] - 40) : 0;
  const to = lines ? Math.min(all.length, lines[1] + 40) : Math.min(all.length, 200);
  return (
    <div className="citation-place">
      {source.url && c.location.start_ms !== undefined && /youtu/.test(source.url) && (
        <p>
          <a
            href={`${source.url}${source.url.includes('?') ? '&' : '?'}t=${Math.floor(start)}s`}
            target="_blank"
            rel="noreferrer noopener"
          >
            {t('Open the video at {time}', { time: placeLabel(c.location, t) })}
          </a>
        </p>
      )}
      <pre className="source-text citation-text" tabIndex={0} aria-label={t('Extracted text')}>
        {all.slice(from, to).map((l, i) => {
          const n = from + i + 1;
          const hit = lines && n >= lines[0] && n <= lines[1];
          return (
            <span
              key={n}
              className={hit ? 'cited-line' : undefined}
              data-line={n}
              ref={hit && n === lines![0] ? (el) => void (mark.current = el) : undefined}
            >
              {l}
              {'\n'}
            </span>
          );
        })}
      </pre>
      {quote}
    </div>
  );
}

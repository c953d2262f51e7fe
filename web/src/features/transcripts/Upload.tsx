import { useMutation } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { ApiFailure } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Field } from '../../ui';
import { uploadTranscript } from './api';
import { acceptedList, ACCEPT_ATTR, sizeText, TRANSCRIPT_UPLOAD_LIMIT_BYTES, uploadMime } from './transcriptSteps';

/** Pick a recording, name it, upload it with a progress bar; `onQueued` gets the new transcript's id. */
export function Upload({ project, onQueued }: { project: string; onQueued: (id: number) => void }) {
  const { t, number, locale } = useI18n();
  const types = acceptedList(locale === 'uk' ? 'uk' : 'en-GB');
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
          message: t('The file name must end in {types}.', { types }),
        });
      const fd = new FormData();
      fd.append('filename', filename.trim());
      fd.append('embed_to_rag', String(embed));
      fd.append('file', mime === file.type ? file : new File([file], file.name, { type: mime }), file.name);
      abort.current = new AbortController();
      setSent({ loaded: 0, total: file.size });
      return uploadTranscript(
        project,
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
        hint={t('{types}; up to {size}.', { types, size: sizeText(TRANSCRIPT_UPLOAD_LIMIT_BYTES, number) })}
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
            {t('Uploaded {pct} % of {size}', { pct: number(pct), size: sizeText(sent.total, number) })}
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

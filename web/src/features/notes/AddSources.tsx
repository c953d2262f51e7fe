import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Select } from '../../ui';
import { useAddSource } from './api';
import { uploadSource } from './notesTransfer';
import { ACCEPT, checkFile, formatBytes, KIND_LIMITS, MB } from './notesUpload';

/** Adding sources: a file (with upload progress), a web page or YouTube address, a project file. */
export function AddSources({ project, noteId, onAdded }: { project: string; noteId: number; onAdded: () => void }) {
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
  const addUrl = useAddSource(project, noteId, { onSuccess: () => setUrl('') });
  const addPath = useAddSource(project, noteId, { onSuccess: () => setFilePath('') });
  const limits = Object.fromEntries(Object.entries(KIND_LIMITS).map(([kind, bytes]) => [kind, formatBytes(bytes)]));
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
            'Video (up to {video}), audio ({audio}), PDF ({pdf}), DOCX ({docx}), text and Markdown ({txt}), images ({image}). Large files are sent in parts.',
            limits,
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
          addUrl.mutate({ source_type: kind, url: url.trim() });
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
          addPath.mutate({ file_path: filePath.trim() });
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

import { useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { filesQuery, useMakeFolder, useReadFile, useSaveFile, useUploadFile } from '../../features/files/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import { VoiceButton } from '../../voice';
import type { TabProps } from '../../features/projects/types';

/** The project's working folder: browse, open and edit text files, make folders, upload. */
export default function Files({ project }: TabProps) {
  const { t, date, number } = useI18n();
  const [dir, setDir] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const textRef = useRef<HTMLTextAreaElement>(null);
  const list = useQuery(filesQuery(project, dir));
  const read = useReadFile(project, {
    onSuccess: (data, p) => {
      setOpen(p);
      setDraft(typeof data === 'string' ? data : data.encoding === 'utf8' ? data.content : t('(binary file)'));
    },
  });
  const save = useSaveFile(project);
  const mkdir = useMakeFolder(project);
  const upload = useUploadFile(project);
  const up = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
  return (
    <div className="split">
      <div>
        <p className="muted">/{dir}</p>
        <div className="actions">
          {dir && (
            <button type="button" onClick={() => setDir(up)}>
              {t('Up')}
            </button>
          )}
          <button
            type="button"
            onClick={() => {
              const name = window.prompt(t('Folder name'));
              if (name) mkdir.mutate(dir ? `${dir}/${name}` : name);
            }}
          >
            {t('New folder')}
          </button>
          <label className="button">
            {t('Upload')}
            <input
              type="file"
              className="sr-only"
              onChange={(e) => e.target.files?.[0] && upload.mutate({ dir, file: e.target.files[0] })}
            />
          </label>
        </div>
        <ErrorLine error={list.error ?? mkdir.error ?? upload.error ?? read.error} />
        {list.isPending ? (
          <Loading />
        ) : (
          <ul className="list">
            {list.data?.entries.map((e) => (
              <li key={e.path}>
                <button
                  type="button"
                  className="link"
                  onClick={() => (e.type === 'dir' ? setDir(e.path) : read.mutate(e.path))}
                >
                  {e.type === 'dir' ? '📁' : '📄'} {e.name}
                </button>{' '}
                <span className="muted">
                  {e.type !== 'dir' && `${number(e.size)} B · `}
                  {date(e.modified_at)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </div>
      {open && (
        <div className="field">
          <div className="field-head">
            <label htmlFor="file-text" id="file-text-label">
              {open}
            </label>
            <VoiceButton target={textRef} describedBy="file-text-label" />
          </div>
          <textarea id="file-text" ref={textRef} rows={20} value={draft} onChange={(e) => setDraft(e.target.value)} />
          <ErrorLine error={save.error} />
          <button type="button" className="primary" onClick={() => save.mutate({ path: open!, content: draft })}>
            {t('Save')}
          </button>
        </div>
      )}
    </div>
  );
}

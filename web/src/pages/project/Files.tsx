import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api, must } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import { VoiceButton } from '../../voice';
import type { TabProps } from './Project';

/** The project's working folder: browse, open and edit text files, make folders, upload. */
export default function Files({ project }: TabProps) {
  const { t, date, number } = useI18n();
  const qc = useQueryClient();
  const [dir, setDir] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const textRef = useRef<HTMLTextAreaElement>(null);
  const pathParams = { name: project };
  const list = useQuery({
    queryKey: ['files', project, dir],
    queryFn: () =>
      must(
        api.GET('/api/crm/projects/{name}/files', { params: { path: pathParams, query: dir ? { path: dir } : {} } }),
      ),
  });
  const read = useMutation({
    mutationFn: (p: string) =>
      must(api.GET('/api/crm/projects/{name}/files/read', { params: { path: pathParams, query: { path: p } } })),
    onSuccess: (data, p) => {
      setOpen(p);
      setDraft(typeof data === 'string' ? data : data.encoding === 'utf8' ? data.content : t('(binary file)'));
    },
  });
  const save = useMutation({
    mutationFn: () =>
      must(
        api.PUT('/api/crm/projects/{name}/files/save', {
          params: { path: pathParams },
          body: { path: open!, content: draft },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['files', project] }),
  });
  const mkdir = useMutation({
    mutationFn: (name: string) =>
      must(
        api.POST('/api/crm/projects/{name}/files/mkdir', {
          params: { path: pathParams },
          body: { path: dir ? `${dir}/${name}` : name },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['files', project] }),
  });
  const upload = useMutation({
    mutationFn: (file: File) => {
      const fd = new FormData();
      if (dir) fd.append('path', dir);
      fd.append('file', file);
      return must(
        api.POST('/api/crm/projects/{name}/files/upload', {
          params: { path: pathParams },
          body: {} as never,
          bodySerializer: () => fd,
        }),
      );
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: ['files', project] }),
  });
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
              if (name) mkdir.mutate(name);
            }}
          >
            {t('New folder')}
          </button>
          <label className="button">
            {t('Upload')}
            <input
              type="file"
              className="sr-only"
              onChange={(e) => e.target.files?.[0] && upload.mutate(e.target.files[0])}
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
          <button type="button" className="primary" onClick={() => save.mutate()}>
            {t('Save')}
          </button>
        </div>
      )}
    </div>
  );
}

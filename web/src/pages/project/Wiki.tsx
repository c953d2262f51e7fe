import { useQuery } from '@tanstack/react-query';
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { authHeaders } from '../../api/client';
import { useSaveWikiPage, wikiPageQuery, wikiTreeQuery } from '../../features/wiki/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading } from '../../ui';
import { VoiceButton } from '../../voice';
import type { TabProps } from '../../features/projects/types';
import { Node, Tree } from '../../features/wiki/Tree';

/** Markdown rendered to sanitized HTML (no scripts, no event handlers). */
export function renderMarkdown(md: string): string {
  return DOMPurify.sanitize(marked.parse(md, { async: false }));
}

/** The wiki: page tree, a Markdown editor with live preview, and the ZIP download of every page. */
export default function Wiki({ project }: TabProps) {
  const { t, date } = useI18n();
  // A search hit or a citation opens a page at a heading: `?page=<path>&heading=<the heading's text>`.
  const [params] = useSearchParams();
  const [path, setPath] = useState(params.get('page') ?? '');
  const [heading, setHeading] = useState(params.get('heading') ?? '');
  const [draft, setDraft] = useState('');
  const previewRef = useRef<HTMLDivElement>(null);
  const mdRef = useRef<HTMLTextAreaElement>(null);
  const [newPath, setNewPath] = useState('');
  const tree = useQuery(wikiTreeQuery(project));
  const file = useQuery({ ...wikiPageQuery(project, path), enabled: !!path });
  useEffect(() => {
    if (file.data) setDraft(file.data.content);
  }, [file.data]);
  const save = useSaveWikiPage(project);
  const preview = useMemo(() => renderMarkdown(draft), [draft]);
  useEffect(() => {
    if (!heading || !previewRef.current) return;
    const h = [...previewRef.current.querySelectorAll('h1, h2, h3, h4, h5, h6')].find(
      (el) => el.textContent?.trim() === heading,
    );
    if (!h) return;
    h.scrollIntoView({ block: 'start' });
    h.classList.add('cited-heading');
    setHeading('');
  }, [preview, heading]);
  async function download() {
    const res = await fetch(`/api/crm/projects/${encodeURIComponent(project)}/wiki/download`, {
      headers: authHeaders(),
    });
    if (!res.ok) return;
    const url = URL.createObjectURL(await res.blob());
    const a = Object.assign(document.createElement('a'), { href: url, download: `${project}-wiki.zip` });
    a.click();
    URL.revokeObjectURL(url);
  }
  return (
    <div className="wiki">
      <aside>
        <button type="button" onClick={() => void download()}>
          {t('Download as ZIP')}
        </button>
        {tree.isPending ? (
          <Loading />
        ) : (
          <Tree nodes={(tree.data?.tree ?? []) as Node[]} onOpen={setPath} current={path} />
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setPath(newPath.endsWith('.md') ? newPath : `${newPath}.md`);
            setDraft('');
            setNewPath('');
          }}
        >
          <Field
            label={t('New page path')}
            placeholder="guides/setup.md"
            required
            value={newPath}
            onChange={(e) => setNewPath(e.target.value)}
          />
          <button type="submit">{t('New page')}</button>
        </form>
      </aside>
      {path ? (
        <div className="editor">
          <p className="muted">
            {path}
            {file.data && ` · ${date(file.data.updated_at)}${file.data.updated_by ? ` · ${file.data.updated_by}` : ''}`}
          </p>
          <div className="split">
            <div className="field">
              <div className="field-head">
                <label htmlFor="wiki-md" id="wiki-md-label">
                  {t('Markdown')}
                </label>
                <VoiceButton target={mdRef} describedBy="wiki-md-label" />
              </div>
              <textarea id="wiki-md" ref={mdRef} rows={20} value={draft} onChange={(e) => setDraft(e.target.value)} />
            </div>
            <div>
              <h3>{t('Preview')}</h3>
              <div ref={previewRef} className="markdown" dangerouslySetInnerHTML={{ __html: preview }} />
            </div>
          </div>
          <ErrorLine error={save.error} />
          <button
            type="button"
            className="primary"
            onClick={() => save.mutate({ path, content: draft })}
            disabled={save.isPending}
          >
            {t('Save')}
          </button>
        </div>
      ) : (
        <p className="muted">{t('Choose a page or create one.')}</p>
      )}
    </div>
  );
}

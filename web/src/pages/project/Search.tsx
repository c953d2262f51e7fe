import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { searchQuery } from '../../features/search/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Markdown } from '../../ui';
import type { TabProps } from '../../features/projects/types';

/** Where a hit lives in the app: issues on the board, wiki pages in the wiki, skills in skills. */
export function hitLink(project: string, docType: string): string {
  const tab = { issue: 'issues', wiki: 'wiki', skill: 'skills', note_source: 'notes' }[docType] ?? 'search';
  return `/projects/${project}/${tab}`;
}

/** Semantic search across the project (issues, wiki, skills, transcripts, memory, docs). */
export default function Search({ project }: TabProps) {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [query, setQuery] = useState('');
  const hits = useQuery(searchQuery(project, query));
  return (
    <div>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(q.trim());
        }}
      >
        <Field label={t('Search the project')} type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        <button type="submit">{t('Search')}</button>
      </form>
      {hits.isFetching && <Loading />}
      <ErrorLine error={hits.error} />
      {hits.data && !hits.data.hits.length && <p className="muted">{t('Nothing found.')}</p>}
      <ol className="list">
        {hits.data?.hits.map((h) => (
          <li key={`${h.doc_type}-${h.doc_id}-${h.chunk_ix}`}>
            <Link to={hitLink(project, h.doc_type)}>{h.title}</Link> <span className="badge">{h.doc_type}</span>
            <Markdown text={h.text} className="muted snippet" />
          </li>
        ))}
      </ol>
    </div>
  );
}

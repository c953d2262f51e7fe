import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { placeLabel } from '../../features/notes/notesChat';
import { searchQuery } from '../../features/search/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Markdown } from '../../ui';
import type { TabProps } from '../../features/projects/types';

/**
 * Where a hit lives in the app: issues on the board (the issue's drawer open), wiki pages in the wiki (opened at the
 * passage's heading), skills in skills.
 */
export function hitLink(
  project: string,
  docType: string,
  hit?: { doc_id: string; location?: { heading?: string } },
): string {
  const tab = { issue: 'issues', wiki: 'wiki', skill: 'skills', note_source: 'notes' }[docType] ?? 'search';
  if (docType === 'issue' && hit && /^\d+$/.test(hit.doc_id)) return `/projects/${project}/${tab}?issue=${hit.doc_id}`;
  if (docType === 'wiki' && hit) {
    const q = new URLSearchParams({ page: hit.doc_id });
    const heading = hit.location?.heading?.split(' › ').pop();
    if (heading) q.set('heading', heading);
    return `/projects/${project}/${tab}?${q}`;
  }
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
            <Link to={hitLink(project, h.doc_type, h)}>{h.title}</Link> <span className="badge">{h.doc_type}</span>
            {placeLabel(h.location, t) && <span className="muted"> · {placeLabel(h.location, t)}</span>}
            <Markdown text={h.text} className="muted snippet" />
          </li>
        ))}
      </ol>
    </div>
  );
}

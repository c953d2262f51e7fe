/** A project: its header and tabs, each tab its own lazily loaded chunk. */
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, type ComponentType } from 'react';
import { NavLink, useParams } from 'react-router';
import { projectQuery } from '../../features/projects/api';
import type { TabProps } from '../../features/projects/types';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Loading, PageTitle } from '../../ui';

const TABS: [string, string, ComponentType<TabProps>][] = [
  ['workers', msg('Workers'), lazy(() => import('./Workers'))],
  ['chat', msg('Chat'), lazy(() => import('./Chat'))],
  ['runs', msg('Runs'), lazy(() => import('./Runs'))],
  ['approvals', msg('Approvals'), lazy(() => import('./Approvals'))],
  ['issues', msg('Issues'), lazy(() => import('./Issues'))],
  ['skills', msg('Skills'), lazy(() => import('./Skills'))],
  ['wiki', msg('Wiki'), lazy(() => import('./Wiki'))],
  ['notes', msg('Notes'), lazy(() => import('./Notes'))],
  ['files', msg('Files'), lazy(() => import('./Files'))],
  ['transcripts', msg('Transcripts'), lazy(() => import('./Transcripts'))],
  ['pins', msg('Pins'), lazy(() => import('./Pins'))],
  ['learnings', msg('Learnings'), lazy(() => import('./Learnings'))],
  ['search', msg('Search'), lazy(() => import('./Search'))],
  ['agents', msg('Agents'), lazy(() => import('./Agents'))],
];

export default function Project() {
  const { t } = useI18n();
  const { name = '', tab = 'workers' } = useParams();
  const project = useQuery(projectQuery(name));
  const current = TABS.find(([id]) => id === tab) ?? TABS[0];
  const Tab = current[2];
  if (project.isPending) return <Loading />;
  if (project.isError) return <ErrorLine error={project.error} />;
  return (
    <section>
      <PageTitle>{project.data.display_name}</PageTitle>
      {project.data.trial_mode && <p className="badge">{t('Trial')}</p>}
      <nav className="tabs" aria-label={t('Project sections')}>
        {TABS.map(([id, label]) => (
          <NavLink key={id} to={`/projects/${name}/${id}`} className={id === current[0] ? 'active' : undefined}>
            {t(label)}
          </NavLink>
        ))}
      </nav>
      <Suspense fallback={<Loading />}>
        <Tab project={name} />
      </Suspense>
    </section>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { projectsQuery, useCreateProject } from '../features/projects/api';
import { useI18n } from '../i18n';
import { ErrorLine, Field, Loading, Modal, PageTitle } from '../ui';
import { PROJECT_NAME_MAX, PROJECT_NAME_PATTERN, useSlugify } from './projectName';
import { Plus } from 'lucide-react';
import { icon } from '../components/icon';

export default function Projects() {
  const { t, tn, date } = useI18n();
  const navigate = useNavigate();
  const projects = useQuery(projectsQuery());
  const [open, setOpen] = useState(false);
  const [displayName, setDisplayName] = useState('');
  const [description, setDescription] = useState('');
  /** The technical name as the user typed it; until then it follows the display name. */
  const [technical, setTechnical] = useState<string | null>(null);
  const slugify = useSlugify(open);
  const projectName = technical ?? (slugify ? slugify(displayName) : '');
  const create = useCreateProject({ onSuccess: (r) => navigate(`/projects/${r.project.name}`) });
  return (
    <section>
      <PageTitle
        actions={
          <>
            <Link className="button" to="/setup">
              {t('Set up with a team')}
            </Link>
            <button type="button" className="primary" onClick={() => setOpen(true)}>
              <Plus {...icon} />
              {t('New project')}
            </button>
          </>
        }
      >
        {t('Projects')}
      </PageTitle>
      {projects.isPending && <Loading />}
      <ErrorLine error={projects.error} />
      {projects.data?.projects.length === 0 && (
        <p>
          {t('No projects yet.')} <Link to="/setup">{t('Set up your first project')}</Link>
        </p>
      )}
      <ul className="cards">
        {projects.data?.projects.map((p) => (
          <li key={p.id} className="card">
            <h2>
              <Link to={`/projects/${p.name}`}>{p.display_name}</Link>
            </h2>
            <p className="muted">{p.description || p.niche || p.name}</p>
            <p className="muted">
              {tn('{n} worker', '{n} workers', p.worker_count)} · {date(p.updated_at)}
              {p.trial_mode && <span className="badge">{t('Trial')}</span>}
            </p>
          </li>
        ))}
      </ul>
      <Modal open={open} onOpenChange={setOpen} title={t('New project')}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({
              displayName,
              projectName,
              ...(description ? { description } : {}),
            });
          }}
        >
          <Field
            label={t('Project name')}
            required
            maxLength={200}
            value={displayName}
            onChange={(e) => setDisplayName(e.target.value)}
          />
          <Field
            label={t('Technical name')}
            hint={t('Lower-case letters, digits and dashes; it names the project in links.')}
            required
            pattern={PROJECT_NAME_PATTERN}
            maxLength={PROJECT_NAME_MAX}
            value={projectName}
            onChange={(e) => setTechnical(e.target.value)}
          />
          <Field
            label={t('Description')}
            maxLength={5000}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
          <ErrorLine
            error={create.error}
            fields={{ displayName: t('Project name'), projectName: t('Technical name'), description: t('Description') }}
          />
          <button type="submit" className="primary" disabled={create.isPending}>
            <Plus {...icon} />
            {t('Create')}
          </button>
        </form>
      </Modal>
    </section>
  );
}

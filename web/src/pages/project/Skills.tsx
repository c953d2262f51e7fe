import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  globalSkillsQuery,
  projectSkillsQuery,
  skillUpdatesQuery,
  useCreateSkill,
  useDecideSkillUpdate,
  useDeleteSkill,
  useForkSkill,
} from '../../features/skills/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, TextArea } from '../../ui';
import type { TabProps } from '../../features/projects/types';
import { Plus } from 'lucide-react';
import { icon } from '../../components/icon';

/** Project skills, the global catalog (fork into the project) and updates of forks waiting for approval. */
export default function Skills({ project }: TabProps) {
  const { t } = useI18n();
  const own = useQuery(projectSkillsQuery(project));
  const global = useQuery(globalSkillsQuery());
  const updates = useQuery(skillUpdatesQuery(project));
  const [form, setForm] = useState({ name: '', description: '', content: '' });
  const create = useCreateSkill(project, { onSuccess: () => setForm({ name: '', description: '', content: '' }) });
  const fork = useForkSkill(project);
  const remove = useDeleteSkill(project);
  const decide = useDecideSkillUpdate(project);
  if (own.isPending) return <Loading />;
  return (
    <div className="split">
      <div>
        <h2>{t('Project skills')}</h2>
        <ErrorLine error={own.error ?? fork.error ?? remove.error ?? decide.error} />
        <ul className="list">
          {own.data?.skills.map((s) => (
            <li key={s.id}>
              <strong>{s.name}</strong> <span className="muted">v{s.version}</span>
              {s.forked_from && <span className="badge">{t('fork')}</span>}
              <p className="muted">{s.description}</p>
              <button type="button" className="danger" onClick={() => remove.mutate(s.id)}>
                {t('Delete')}
              </button>
            </li>
          ))}
        </ul>
        {!!updates.data?.updates.length && (
          <>
            <h2>{t('Updates to approve')}</h2>
            <ul className="list">
              {updates.data.updates.map((u) => (
                <li key={u.id}>
                  {t('{fork}: version {from} → {to}', { fork: u.fork_name, from: u.from_version, to: u.to_version })}{' '}
                  <button type="button" onClick={() => decide.mutate({ id: u.id, ok: true })}>
                    {t('Approve')}
                  </button>
                  <button type="button" onClick={() => decide.mutate({ id: u.id, ok: false })}>
                    {t('Reject')}
                  </button>
                </li>
              ))}
            </ul>
          </>
        )}
        <h3>{t('New skill')}</h3>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(form);
          }}
        >
          <Field
            label={t('Name (a-z, 0-9 and -)')}
            required
            pattern="[a-z0-9][a-z0-9\-]{0,63}"
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.target.value })}
          />
          <Field
            label={t('Description')}
            value={form.description}
            onChange={(e) => setForm({ ...form, description: e.target.value })}
          />
          <TextArea
            label={t('Content')}
            rows={6}
            value={form.content}
            onChange={(e) => setForm({ ...form, content: e.target.value })}
          />
          <ErrorLine error={create.error} />
          <button type="submit" className="primary">
            <Plus {...icon} />
            {t('Create')}
          </button>
        </form>
      </div>
      <div>
        <h2>{t('Global skills')}</h2>
        <ul className="list">
          {global.data?.skills.map((s) => (
            <li key={s.id}>
              <strong>{s.name}</strong> <span className="muted">v{s.version}</span>
              <p className="muted">{s.description}</p>
              <button type="button" onClick={() => fork.mutate(s.id)}>
                {t('Fork into this project')}
              </button>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { learningsQuery, useAddLearning } from '../../features/learnings/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading } from '../../ui';
import type { TabProps } from '../../features/projects/types';

export default function Learnings({ project }: TabProps) {
  const { t, date } = useI18n();
  const [text, setText] = useState('');
  const [tags, setTags] = useState('');
  const list = useQuery(learningsQuery(project));
  const add = useAddLearning(project, {
    onSuccess: () => {
      setText('');
      setTags('');
    },
  });
  if (list.isPending) return <Loading />;
  return (
    <div>
      <ul className="list">
        {list.data?.learnings.map((l) => (
          <li key={l.id}>
            {l.text}{' '}
            {l.tags.map((tag) => (
              <span key={tag} className="badge">
                {tag}
              </span>
            ))}{' '}
            <span className="muted">
              {l.author ?? ''} {date(l.created_at)}
            </span>
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate({
            text,
            tags: tags
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          });
        }}
      >
        <Field label={t('What was learned')} required value={text} onChange={(e) => setText(e.target.value)} />
        <Field label={t('Tags (comma-separated)')} value={tags} onChange={(e) => setTags(e.target.value)} />
        <ErrorLine error={add.error ?? list.error} />
        <button type="submit">{t('Add')}</button>
      </form>
    </div>
  );
}

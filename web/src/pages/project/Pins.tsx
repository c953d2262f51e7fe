import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading } from '../../ui';
import type { TabProps } from './Project';

export default function Pins({ project }: TabProps) {
  const { t, date } = useI18n();
  const qc = useQueryClient();
  const [text, setText] = useState('');
  const path = { name: project };
  const pins = useQuery({
    queryKey: ['pins', project],
    queryFn: () => must(api.GET('/api/crm/projects/{name}/pins', { params: { path } })),
  });
  const refresh = () => qc.invalidateQueries({ queryKey: ['pins', project] });
  const add = useMutation({
    mutationFn: () => must(api.POST('/api/crm/projects/{name}/pins', { params: { path }, body: { text } })),
    onSuccess: () => {
      setText('');
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/pins/{id}', { params: { path: { name: project, id } } })),
    onSuccess: refresh,
  });
  if (pins.isPending) return <Loading />;
  return (
    <div>
      <ul className="list">
        {pins.data?.pins.map((p) => (
          <li key={p.id}>
            📌 {p.text} <span className="muted">{date(p.created_at)}</span>{' '}
            <button type="button" aria-label={t('Remove the pin')} onClick={() => remove.mutate(p.id)}>
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate();
        }}
      >
        <Field
          label={t('Pin a note for the workers')}
          required
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <ErrorLine error={add.error ?? remove.error ?? pins.error} />
        <button type="submit">{t('Pin')}</button>
      </form>
    </div>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { pinsQuery, useAddPin, useRemovePin } from '../../features/pins/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading } from '../../ui';
import type { TabProps } from '../../features/projects/types';

export default function Pins({ project }: TabProps) {
  const { t, date } = useI18n();
  const [text, setText] = useState('');
  const pins = useQuery(pinsQuery(project));
  const add = useAddPin(project, { onSuccess: () => setText('') });
  const remove = useRemovePin(project);
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
          add.mutate(text);
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

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Field } from '../../ui';

/** Invite codes: create (with a note), list, revoke. */
export default function Invites() {
  const { t, date } = useI18n();
  const qc = useQueryClient();
  const [count, setCount] = useState(1);
  const [note, setNote] = useState('');
  const invites = useQuery({ queryKey: ['admin-invites'], queryFn: () => must(api.GET('/api/crm/admin/invites')) });
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/crm/admin/invites', { body: { count, ...(note ? { note } : {}) } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['admin-invites'] }),
  });
  const revoke = useMutation({
    mutationFn: (code: string) => must(api.DELETE('/api/crm/admin/invites/{code}', { params: { path: { code } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['admin-invites'] }),
  });
  return (
    <div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Field
          label={t('How many')}
          type="number"
          min={1}
          max={100}
          value={count}
          onChange={(e) => setCount(Number(e.target.value))}
        />
        <Field label={t('Note')} value={note} onChange={(e) => setNote(e.target.value)} />
        <button type="submit" className="primary">
          {t('Create invite codes')}
        </button>
      </form>
      {create.data && (
        <p role="status" className="ok">
          {t('New codes:')} <code>{create.data.codes.join(' ')}</code>
        </p>
      )}
      <ErrorLine error={invites.error ?? create.error ?? revoke.error} />
      {invites.data && (
        <p className="muted">
          {t('{active} active, {used} used', { active: invites.data.total_active, used: invites.data.total_used })}
        </p>
      )}
      <ul className="list">
        {invites.data?.invites.map((i) => (
          <li key={i.code}>
            <code>{i.code}</code> {i.status} {i.note} <span className="muted">{date(i.created_at)}</span>{' '}
            {i.used_by_email && <span>{i.used_by_email}</span>}
            {i.status === 'active' && (
              <button type="button" onClick={() => revoke.mutate(i.code)}>
                {t('Revoke')}
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { invitesQuery, useCreateInvites, useRevokeInvite } from '../../features/admin/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field } from '../../ui';

/** Invite codes: create (with a note), list, revoke. */
export default function Invites() {
  const { t, date } = useI18n();
  const [count, setCount] = useState(1);
  const [note, setNote] = useState('');
  const invites = useQuery(invitesQuery());
  const create = useCreateInvites();
  const revoke = useRevokeInvite();
  return (
    <div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ count, ...(note ? { note } : {}) });
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

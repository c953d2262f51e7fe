import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { tokensQuery, useCreateToken, useRevokeToken } from '../../features/account/api';
import { projectsQuery } from '../../features/projects/api';
import { useMe } from '../../auth';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Select } from '../../ui';

type Scope = 'read' | 'write' | 'admin';

/**
 * The access tokens tab (`/account?tab=tokens`): create a token for a program or a coding agent (name, scopes,
 * one project or all, expiry; shown once), and the list of tokens and device credentials with their prefix,
 * creation, last use and expiry, each revocable.
 */
export default function Tokens() {
  const { t, tn, date } = useI18n();
  const me = useMe();
  const tokens = useQuery(tokensQuery());
  const projects = useQuery(projectsQuery());
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read']);
  const [project, setProject] = useState('');
  const [days, setDays] = useState('90');
  const [shown, setShown] = useState<string | null>(null);
  const create = useCreateToken({
    onSuccess: (r) => {
      setShown(r.token);
      setName('');
    },
  });
  const revoke = useRevokeToken();
  const toggle = (s: Scope) => setScopes((cur) => (cur.includes(s) ? cur.filter((x) => x !== s) : [...cur, s]));
  const offered: Scope[] = me.data?.role === 'admin' ? ['read', 'write', 'admin'] : ['read', 'write'];
  return (
    <div>
      <h2>{t('Access tokens')}</h2>
      <p>
        {t(
          'A token lets a program or a coding agent act as you: send it as Authorization: Bearer. It never changes your password, tokens, export or erasure.',
        )}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setShown(null);
          create.mutate({
            name,
            scopes,
            project: project || null,
            ...(days ? { expires_in_days: Number(days) } : {}),
          });
        }}
      >
        <Field
          label={t('Token name')}
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <fieldset>
          <legend>{t('Scopes')}</legend>
          {offered.map((s) => (
            <label key={s} className="radio">
              <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} />
              {s === 'read' ? t('read: look') : s === 'write' ? t('write: change') : t('admin: every project')}
            </label>
          ))}
        </fieldset>
        <Select
          label={t('Project')}
          value={project}
          onChange={setProject}
          options={[
            { value: '', label: t('All my projects') },
            ...(projects.data?.projects ?? []).map((p) => ({ value: p.name, label: p.display_name })),
          ]}
        />
        <Select
          label={t('Expires')}
          value={days}
          onChange={setDays}
          options={[
            { value: '7', label: tn('in {n} day', 'in {n} days', 7) },
            { value: '30', label: tn('in {n} day', 'in {n} days', 30) },
            { value: '90', label: tn('in {n} day', 'in {n} days', 90) },
            { value: '365', label: tn('in {n} day', 'in {n} days', 365) },
            { value: '', label: t('never') },
          ]}
        />
        <button type="submit" className="primary" disabled={!scopes.length}>
          {t('Create the token')}
        </button>
        <ErrorLine error={create.error} />
      </form>
      {shown && (
        <div role="status" className="notice">
          <p>{t('Copy the token now: it is not shown again.')}</p>
          <pre className="cli-steps">{shown}</pre>
        </div>
      )}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.data?.tokens.length ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th>{t('Name')}</th>
                <th>{t('Token')}</th>
                <th>{t('Scopes')}</th>
                <th>{t('Project')}</th>
                <th>{t('Created')}</th>
                <th>{t('Last used')}</th>
                <th>{t('Expires')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.data.tokens.map((k) => (
                <tr key={k.id}>
                  <td>
                    {k.name}
                    {k.kind === 'device' && <span className="muted"> ({t('CLI device')})</span>}
                  </td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{k.project ?? t('all')}</td>
                  <td>{date(k.created_at)}</td>
                  <td>{k.last_used_at ? date(k.last_used_at) : '—'}</td>
                  <td>{k.expires_at ? date(k.expires_at) : t('never')}</td>
                  <td>
                    <button type="button" className="danger" onClick={() => revoke.mutate(k.id)}>
                      {t('Revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">{t('No tokens yet.')}</p>
      )}
      <ErrorLine error={tokens.error ?? revoke.error} />
    </div>
  );
}

import * as Tabs from '@radix-ui/react-tabs';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type ComponentType } from 'react';
import { useSearchParams } from 'react-router';
import { api, authHeaders, ApiFailure, must } from '../api/client';
import { useMe } from '../auth';
import { msg, useI18n } from '../i18n';
import { session } from '../session';
import { ErrorLine, Field, Loading, PageTitle } from '../ui';
import { Connections } from './account/Connections';

/** The exact text the erasure asks for. */
export const ERASE_CONFIRM = 'DELETE MY ACCOUNT';

function Settings() {
  const { t } = useI18n();
  const qc = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => must(api.GET('/api/crm/account/settings')) });
  const [key, setKey] = useState('');
  const save = useMutation({
    mutationFn: (body: { llm_key?: string | null; upload_transcripts?: boolean }) =>
      must(api.PUT('/api/crm/account/settings', { body })),
    onSuccess: (data) => {
      setKey('');
      qc.setQueryData(['settings'], data);
    },
  });
  const [pw, setPw] = useState({ current_password: '', new_password: '' });
  const change = useMutation({
    mutationFn: () => must(api.POST('/api/auth/change-password', { body: pw })),
    onSuccess: (r) => {
      session.signIn(r.token);
      setPw({ current_password: '', new_password: '' });
    },
  });
  if (!settings.data) return <Loading />;
  return (
    <div>
      <h2>{t('Own LLM key')}</h2>
      <p>
        {settings.data.llm_key_set
          ? t('A key is stored: {masked}', { masked: settings.data.llm_key ?? '' })
          : t('No key stored: your projects use the trial while it lasts.')}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({ llm_key: key });
        }}
      >
        <Field
          label={t('LLM key')}
          type="password"
          autoComplete="off"
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <button type="submit" className="primary">
          {t('Save the key')}
        </button>
        {settings.data.llm_key_set && (
          <button type="button" className="danger" onClick={() => save.mutate({ llm_key: null })}>
            {t('Remove the key')}
          </button>
        )}
      </form>
      <label className="radio">
        <input
          type="checkbox"
          checked={settings.data.upload_transcripts}
          onChange={(e) => save.mutate({ upload_transcripts: e.target.checked })}
        />
        {t('Upload CLI session transcripts')}
      </label>
      <ErrorLine error={save.error} />
      <Connections />
      <h2>{t('Password')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          change.mutate();
        }}
      >
        <Field
          label={t('Current password')}
          type="password"
          autoComplete="current-password"
          required
          value={pw.current_password}
          onChange={(e) => setPw({ ...pw, current_password: e.target.value })}
        />
        <Field
          label={t('New password')}
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
          value={pw.new_password}
          onChange={(e) => setPw({ ...pw, new_password: e.target.value })}
        />
        <ErrorLine error={change.error} />
        {change.isSuccess && (
          <p role="status" className="ok">
            {t('Your password is changed.')}
          </p>
        )}
        <button type="submit">{t('Change the password')}</button>
      </form>
    </div>
  );
}

function Usage() {
  const { t, number, date } = useI18n();
  const usage = useQuery({ queryKey: ['usage'], queryFn: () => must(api.GET('/api/crm/account/usage')) });
  const trial = useQuery({ queryKey: ['trial'], queryFn: () => must(api.GET('/api/crm/account/trial-status')) });
  return (
    <div>
      {trial.data && (
        <p>
          {trial.data.has_trial_active
            ? t('Trial: {left} of {granted} tokens left', {
                left: number(trial.data.total_remaining),
                granted: number(trial.data.total_granted),
              })
            : t('No active trial.')}
        </p>
      )}
      {usage.data && (
        <>
          <p>
            {t('Total: {total} tokens ({input} in, {output} out)', {
              total: number(usage.data.totals.total),
              input: number(usage.data.totals.input),
              output: number(usage.data.totals.output),
            })}
          </p>
          <table className="table">
            <thead>
              <tr>
                <th>{t('When')}</th>
                <th>{t('Project')}</th>
                <th>{t('Model')}</th>
                <th>{t('Tokens')}</th>
              </tr>
            </thead>
            <tbody>
              {usage.data.rows.map((r) => (
                <tr key={r.id}>
                  <td>{date(r.created_at)}</td>
                  <td>{r.project_name}</td>
                  <td>{r.model}</td>
                  <td>{number(r.total_tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <ErrorLine error={usage.error ?? trial.error} />
    </div>
  );
}

function Privacy() {
  const { t } = useI18n();
  const me = useMe();
  const [confirm, setConfirm] = useState('');
  const [exportError, setExportError] = useState<unknown>(null);
  const erase = useMutation({
    mutationFn: () => must(api.DELETE('/api/auth/account', { body: { confirm } })),
    onSuccess: () => session.signOut(),
  });
  async function download() {
    setExportError(null);
    const res = await fetch('/api/auth/export', { headers: authHeaders() });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      setExportError(
        new ApiFailure(res.status, { error: body.error ?? `http_${res.status}`, message: body.message ?? '' }),
      );
      return;
    }
    const name = /filename="?([^";]+)/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export.json';
    const url = URL.createObjectURL(await res.blob());
    Object.assign(document.createElement('a'), { href: url, download: name }).click();
    // Revoked a little later: the browser may still be reading the blob when click() returns.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
  return (
    <div>
      <h2>{t('Export your data')}</h2>
      <p>{t('A JSON file with your profile, projects, messages, issues, notes and usage.')}</p>
      <button type="button" onClick={() => void download()}>
        {t('Download the export')}
      </button>
      <ErrorLine error={exportError} />
      <h2>{t('Delete your account')}</h2>
      <p>
        {t('This erases {email} and every project you own. It cannot be undone. Type {confirm} to confirm.', {
          email: me.data?.email ?? '',
          confirm: ERASE_CONFIRM,
        })}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          erase.mutate();
        }}
      >
        <Field
          label={t('Confirmation')}
          autoComplete="off"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
        />
        <ErrorLine error={erase.error} />
        <button type="submit" className="danger" disabled={confirm !== ERASE_CONFIRM || erase.isPending}>
          {t('Delete my account')}
        </button>
      </form>
    </div>
  );
}

/** The tabs: `?tab=` value, label, component (the newer tabs load as their own chunks). */
const TABS: [string, string, ComponentType][] = [
  ['settings', msg('Settings'), Settings],
  ['usage', msg('Usage'), Usage],
  ['billing', msg('Plan and payment'), lazy(() => import('./account/Billing'))],
  ['notifications', msg('Notifications'), lazy(() => import('./account/Notifications'))],
  ['cli', msg('CLI'), lazy(() => import('./account/Cli'))],
  ['tokens', msg('Access tokens'), lazy(() => import('./account/Tokens'))],
  ['cloud', msg('Cloud container'), lazy(() => import('./account/Cloud'))],
  ['privacy', msg('Export and erasure'), Privacy],
];

export default function Account() {
  const { t } = useI18n();
  const me = useMe();
  const [params, setParams] = useSearchParams();
  const tab = TABS.find(([v]) => v === params.get('tab'))?.[0] ?? 'settings';
  return (
    <section>
      <PageTitle>{t('Account')}</PageTitle>
      {me.data && (
        <p className="muted">
          {me.data.email} · {t('plan')}: {me.data.plan}
        </p>
      )}
      <Tabs.Root value={tab} onValueChange={(v) => setParams({ tab: v }, { replace: true })}>
        <Tabs.List className="tabs" aria-label={t('Account sections')}>
          {TABS.map(([value, label]) => (
            <Tabs.Trigger key={value} value={value}>
              {t(label)}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {TABS.map(([value, , Tab]) => (
          <Tabs.Content key={value} value={value}>
            <Suspense fallback={<Loading />}>
              <Tab />
            </Suspense>
          </Tabs.Content>
        ))}
      </Tabs.Root>
    </section>
  );
}

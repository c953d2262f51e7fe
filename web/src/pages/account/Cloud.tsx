import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { Link } from 'react-router';
import { ApiFailure } from '../../api/client';
import { billingStatusQuery } from '../../features/billing/api';
import {
  cloudStatusQuery,
  cloudWaitlistQuery,
  useClaudeVerify,
  useDeprovision,
  useJoinCloudWaitlist,
  useProvision,
  useRefreshCloudStatus,
  useSshKeygen,
  useSshVerify,
} from '../../features/cloud/api';
import { useMe } from '../../auth';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Loading } from '../../ui';
import { Logs } from '../../features/cloud/Logs';
import { cloudActions, statusLabel } from '../../features/account/logic';

const Terminal = lazy(() => import('./Terminal'));

/**
 * The cloud container tab (`/account?tab=cloud`): the container's status and what it allows (create, remove
 * with confirmation, the SSH key and the checks, a terminal in the page and the log stream); without the cloud
 * plan, the way to get it (the billing tab) and the cloud waitlist.
 */
export default function Cloud() {
  const { t, date } = useI18n();
  const me = useMe();
  const billing = useQuery(billingStatusQuery());
  const status = useQuery(cloudStatusQuery());
  const cloudPlan = billing.data?.features.cloud_container ?? false;
  const waitlist = useQuery({ ...cloudWaitlistQuery(), enabled: !!billing.data && !cloudPlan });
  const refresh = useRefreshCloudStatus();
  const provision = useProvision();
  const [confirmRemove, setConfirmRemove] = useState(false);
  const deprovision = useDeprovision({
    onSuccess: () => {
      setConfirmRemove(false);
      setTerminal(false);
    },
  });
  const keygen = useSshKeygen();
  const sshVerify = useSshVerify();
  const claudeVerify = useClaudeVerify();
  const join = useJoinCloudWaitlist();
  const [terminal, setTerminal] = useState(false);
  const [terminalNote, setTerminalNote] = useState('');
  const [logs, setLogs] = useState(false);

  if (status.error) return <ErrorLine error={status.error} />;
  if (!status.data || !billing.data) return <Loading />;
  const s = status.data;
  const actions = cloudActions(s.status);
  const chatId = me.data?.chat_id ?? '';
  const planNeeded = provision.error instanceof ApiFailure && provision.error.status === 402;
  const runtimeDown =
    provision.error instanceof ApiFailure && provision.error.body.error === 'container_runtime_unavailable';

  return (
    <div className="cloud">
      <h2>{t('Cloud container')}</h2>
      <p>{t('A private Linux container for your work, with the agent CLI, reachable from this page and from chat.')}</p>
      <dl className="facts">
        <dt>{t('Status')}</dt>
        <dd data-testid="cloud-status">{t(statusLabel(s.status))}</dd>
        {s.container_id && (
          <>
            <dt>{t('Container')}</dt>
            <dd>
              <code>{s.container_id}</code>
            </dd>
            <dt>{t('Running')}</dt>
            <dd>{s.docker_running ? t('yes') : t('no')}</dd>
            <dt>{t('Agent CLI checked')}</dt>
            <dd>{s.agent_authed ? t('yes') : t('no')}</dd>
            <dt>{t('Code host SSH checked')}</dt>
            <dd>{s.codehost_authed ? t('yes') : t('no')}</dd>
            <dt>{t('Last active')}</dt>
            <dd>{date(s.last_active)}</dd>
            <dt>{t('Created')}</dt>
            <dd>{date(s.created_at)}</dd>
          </>
        )}
      </dl>

      {!cloudPlan && (
        <div className="notice">
          <p>
            <span id="cloud-plan-needed">{t('A cloud container needs the cloud plan.')}</span>{' '}
            <Link to="/account?tab=billing">{t('See the plans')}</Link>
          </p>
          {waitlist.data &&
            (waitlist.data.status === 'not_joined' ? (
              <>
                <p>{t('Or join the cloud waitlist: we invite people in the order they joined.')}</p>
                <button type="button" disabled={join.isPending} onClick={() => join.mutate()}>
                  {t('Join the cloud waitlist')}
                </button>
              </>
            ) : (
              <p role="status">
                {'position' in waitlist.data &&
                  t('You are number {position} on the cloud waitlist ({status}), since {when}.', {
                    position: waitlist.data.position,
                    status: waitlist.data.status,
                    when: date(waitlist.data.joined_at),
                  })}
              </p>
            ))}
          <ErrorLine error={waitlist.error ?? join.error} />
        </div>
      )}

      <div className="actions">
        {actions.provision && (
          <button
            type="button"
            className="primary"
            disabled={provision.isPending || !cloudPlan}
            aria-describedby={cloudPlan ? undefined : 'cloud-plan-needed'}
            onClick={() => provision.mutate()}
          >
            {provision.isPending ? t('Creating…') : t('Create my container')}
          </button>
        )}
        {actions.terminal && (
          <button
            type="button"
            onClick={() => {
              setTerminalNote('');
              setTerminal((v) => !v);
            }}
          >
            {terminal ? t('Close the terminal') : t('Open the terminal')}
          </button>
        )}
        {s.status !== 'none' && (
          <button type="button" onClick={() => setLogs((v) => !v)}>
            {logs ? t('Hide the log') : t('Show the log')}
          </button>
        )}
        {actions.deprovision && (
          <button type="button" className="danger" onClick={() => setConfirmRemove(true)}>
            {t('Remove the container')}
          </button>
        )}
        <button type="button" className="link" onClick={refresh}>
          {t('Refresh')}
        </button>
      </div>
      {runtimeDown ? (
        <p role="alert" className="notice">
          {t('This server cannot run cloud containers right now. Try again later.')}
        </p>
      ) : (
        <ErrorLine error={provision.error} />
      )}
      {planNeeded && (
        <p>
          <Link to="/account?tab=billing">{t('Get the cloud plan')}</Link>
        </p>
      )}
      {terminalNote && !terminal && <p className="muted">{terminalNote}</p>}

      {terminal && chatId && (
        <Suspense fallback={<Loading />}>
          <Terminal chatId={chatId} onClose={setTerminalNote} />
        </Suspense>
      )}
      {logs && chatId && <Logs chatId={chatId} />}

      {actions.keys && (
        <>
          <h2>{t('SSH key and checks')}</h2>
          <p>{t('The container gets its own SSH key; add the public key to your code host to clone and push.')}</p>
          <div className="actions">
            <button type="button" disabled={keygen.isPending} onClick={() => keygen.mutate()}>
              {t('Show the public key')}
            </button>
            <button type="button" disabled={sshVerify.isPending} onClick={() => sshVerify.mutate()}>
              {t('Check SSH to the code host')}
            </button>
            <button type="button" disabled={claudeVerify.isPending} onClick={() => claudeVerify.mutate()}>
              {t('Check the agent CLI')}
            </button>
          </div>
          {keygen.data && (
            <label className="field">
              {t('Public key')}
              <textarea readOnly rows={3} value={keygen.data.public_key} onFocus={(e) => e.target.select()} />
            </label>
          )}
          {[sshVerify, claudeVerify].map(
            (v, i) =>
              v.data && (
                <div key={i}>
                  <p className={v.data.ok ? 'ok' : 'error'}>
                    {v.data.ok ? t('The check passed.') : t('The check failed.')}
                  </p>
                  <pre className="cloud-log">{v.data.output}</pre>
                </div>
              ),
          )}
          <ErrorLine error={keygen.error ?? sshVerify.error ?? claudeVerify.error} />
        </>
      )}

      <ConfirmDialog
        open={confirmRemove}
        title={t('Remove your cloud container?')}
        confirmLabel={t('Yes, remove it')}
        cancelLabel={t('Keep it')}
        busy={deprovision.isPending}
        error={deprovision.error}
        onConfirm={() => deprovision.mutate()}
        onCancel={() => setConfirmRemove(false)}
      >
        <p>{t('The container and everything in it are deleted. You can create a new, empty one later.')}</p>
      </ConfirmDialog>
    </div>
  );
}

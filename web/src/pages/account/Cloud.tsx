import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, ApiFailure, must } from '../../api/client';
import { useMe } from '../../auth';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { ErrorLine, Loading, Modal } from '../../ui';
import { cloudActions, logsUrl, statusLabel } from './logic';

const Terminal = lazy(() => import('./Terminal'));

/** Log lines kept on the page (older ones scroll away). */
const LOG_KEEP = 500;

/** Follows the container's log (SSE `/api/sse/cloud/:userId/logs`): `data: {line}` per line, `{closed:true}` at the end. */
function Logs({ chatId }: { chatId: string }) {
  const { t } = useI18n();
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState<'following' | 'closed' | 'error'>('following');
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const token = session.token();
    if (!token) return;
    const es = new EventSource(logsUrl(chatId, token));
    es.onmessage = (e) => {
      let data: { line?: string; closed?: boolean };
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (data.closed) {
        setState('closed');
        es.close();
      } else if (typeof data.line === 'string') {
        const line = data.line;
        setLines((l) => [...l.slice(-(LOG_KEEP - 1)), line]);
      }
    };
    es.onerror = () => {
      setState((s) => (s === 'following' ? 'error' : s));
      es.close();
    };
    return () => es.close();
  }, [chatId]);
  // A block body: in current Chromium scrollIntoView returns a Promise, which React would take for a clean-up.
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'nearest' });
  }, [lines]);
  return (
    <div>
      <p className="muted" aria-live="polite">
        {state === 'following' && t('Following the log…')}
        {state === 'closed' && t('The container was removed; the log has ended.')}
        {state === 'error' && t('The log stream stopped. Open it again to retry.')}
      </p>
      <pre className="cloud-log" tabIndex={0} aria-label={t('Container log')}>
        {lines.length ? lines.join('\n') : t('No log lines in the last hour.')}
        <div ref={end} />
      </pre>
    </div>
  );
}

/**
 * The cloud container tab (`/account?tab=cloud`): the container's status and what it allows (create, remove
 * with confirmation, the SSH key and the checks, a terminal in the page and the log stream); without the cloud
 * plan, the way to get it (the billing tab) and the cloud waitlist.
 */
export default function Cloud() {
  const { t, date } = useI18n();
  const qc = useQueryClient();
  const me = useMe();
  const billing = useQuery({ queryKey: ['billing-status'], queryFn: () => must(api.GET('/api/crm/billing/status')) });
  const status = useQuery({
    queryKey: ['cloud-status'],
    queryFn: () => must(api.GET('/api/crm/cloud/status')),
    // While the container is being created, look again every few seconds.
    refetchInterval: (q) => (q.state.data?.status === 'provisioning' ? 3000 : false),
  });
  const cloudPlan = billing.data?.features.cloud_container ?? false;
  const waitlist = useQuery({
    queryKey: ['cloud-waitlist'],
    queryFn: () => must(api.GET('/api/crm/cloud/waitlist/status')),
    enabled: !!billing.data && !cloudPlan,
  });
  const refresh = () => void qc.invalidateQueries({ queryKey: ['cloud-status'] });
  const provision = useMutation({ mutationFn: () => must(api.POST('/api/crm/cloud/provision')), onSuccess: refresh });
  const [confirmRemove, setConfirmRemove] = useState(false);
  const deprovision = useMutation({
    mutationFn: () => must(api.POST('/api/crm/cloud/deprovision')),
    onSuccess: () => {
      setConfirmRemove(false);
      setTerminal(false);
      refresh();
    },
  });
  const keygen = useMutation({ mutationFn: () => must(api.POST('/api/crm/cloud/ssh-keygen')) });
  const sshVerify = useMutation({ mutationFn: () => must(api.POST('/api/crm/cloud/ssh-verify')), onSettled: refresh });
  const claudeVerify = useMutation({
    mutationFn: () => must(api.POST('/api/crm/cloud/claude-verify')),
    onSettled: refresh,
  });
  const join = useMutation({
    mutationFn: () => must(api.POST('/api/crm/cloud/waitlist', { body: {} })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['cloud-waitlist'] }),
  });
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
            {t('A cloud container needs the cloud plan.')} <Link to="/account?tab=billing">{t('See the plans')}</Link>
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
          <button type="button" className="primary" disabled={provision.isPending} onClick={() => provision.mutate()}>
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

      <Modal open={confirmRemove} onOpenChange={setConfirmRemove} title={t('Remove your cloud container?')}>
        <p>{t('The container and everything in it are deleted. You can create a new, empty one later.')}</p>
        <ErrorLine error={deprovision.error} />
        <div className="actions">
          <button
            type="button"
            className="danger"
            disabled={deprovision.isPending}
            onClick={() => deprovision.mutate()}
          >
            {t('Yes, remove it')}
          </button>
          <button type="button" onClick={() => setConfirmRemove(false)}>
            {t('Keep it')}
          </button>
        </div>
      </Modal>
    </div>
  );
}

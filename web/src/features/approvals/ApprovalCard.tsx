/**
 * One pending approval: the tool, its arguments (for a write of a wiki page or a file, a diff against what is there
 * now), and Approve / Deny with an optional reason. Shown inline in the chat and on the approvals page.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client';
import { useI18n } from '../../i18n';
import { lineDiff } from '../../lib/diff';
import { ErrorLine } from '../../ui';
import { type Approval, useDecideApproval } from './api';

/** Tools whose input `{path, content}` replaces a text: their card shows a diff. */
const WRITES: Record<string, 'wiki' | 'files'> = { save_wiki_page: 'wiki', write_file: 'files' };

/** The current text a write would replace ('' when there is none or it cannot be read). */
function useCurrentText(project: string, kind: 'wiki' | 'files' | undefined, path: string) {
  return useQuery({
    queryKey: ['approval-current', project, kind, path],
    enabled: !!kind && !!path,
    retry: false,
    queryFn: async () => {
      if (kind === 'wiki') {
        const r = await api.GET('/api/crm/projects/{name}/wiki/file', {
          params: { path: { name: project }, query: { path } },
        });
        return r.data?.content ?? '';
      }
      const r = await api.GET('/api/crm/projects/{name}/files/read', {
        params: { path: { name: project }, query: { path } },
      });
      const d = r.data as { content?: string } | undefined;
      return typeof d?.content === 'string' ? d.content : '';
    },
  });
}

function Diff({ before, after }: { before: string; after: string }) {
  const { t } = useI18n();
  return (
    <pre className="diff" aria-label={t('Changes')}>
      {lineDiff(before, after).map((l, i) => (
        <div key={i} className={l.op === '+' ? 'add' : l.op === '-' ? 'del' : undefined}>
          {l.op} {l.text}
        </div>
      ))}
    </pre>
  );
}

export function ApprovalCard({
  project,
  approval,
  workerName,
  onDecided,
}: {
  project: string;
  approval: Approval;
  workerName?: string;
  onDecided?: (a: Approval) => void;
}) {
  const { t, date } = useI18n();
  const [reason, setReason] = useState('');
  const [denying, setDenying] = useState(false);
  const decide = useDecideApproval(project, { onSuccess: (a) => onDecided?.(a) });
  const kind = WRITES[approval.tool];
  const input = approval.input as { path?: unknown; content?: unknown };
  const path = typeof input.path === 'string' ? input.path : '';
  const current = useCurrentText(project, kind, path);
  const rest = kind ? Object.fromEntries(Object.entries(approval.input).filter(([k]) => k !== 'content')) : null;
  return (
    <section className="approval-card" aria-label={t('Approval needed: {tool}', { tool: approval.tool })}>
      <header>
        <strong>{t('Approval needed: {tool}', { tool: approval.tool })}</strong>
        <span className="muted">
          {workerName && `${workerName} · `}
          {t('Run #{id}', { id: approval.run_id })} · {date(approval.created_at)}
        </span>
      </header>
      {kind && typeof input.content === 'string' ? (
        <>
          <pre className="args">{JSON.stringify(rest, null, 2)}</pre>
          {current.isPending && !!path ? null : <Diff before={current.data ?? ''} after={input.content} />}
        </>
      ) : (
        <pre className="args">{JSON.stringify(approval.input, null, 2)}</pre>
      )}
      <ErrorLine error={decide.error} />
      {denying ? (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            decide.mutate({ id: approval.id, decision: 'deny', reason: reason.trim() || undefined });
          }}
        >
          <label className="sr-only" htmlFor={`deny-reason-${approval.id}`}>
            {t('Reason (optional)')}
          </label>
          <input
            id={`deny-reason-${approval.id}`}
            value={reason}
            maxLength={2000}
            placeholder={t('Reason (optional)')}
            onChange={(e) => setReason(e.target.value)}
          />
          <button type="submit" className="danger" disabled={decide.isPending}>
            {t('Deny')}
          </button>
          <button type="button" onClick={() => setDenying(false)}>
            {t('Back')}
          </button>
        </form>
      ) : (
        <div className="row">
          <button
            type="button"
            className="primary"
            disabled={decide.isPending}
            onClick={() => decide.mutate({ id: approval.id, decision: 'approve' })}
          >
            {t('Approve')}
          </button>
          <button type="button" disabled={decide.isPending} onClick={() => setDenying(true)}>
            {t('Deny…')}
          </button>
        </div>
      )}
    </section>
  );
}

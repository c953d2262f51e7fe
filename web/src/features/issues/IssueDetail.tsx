import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { issueQuery, useLogIssue } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading, TextArea } from '../../ui';
import { STATUS_LABELS } from './board';

/** One issue: priority, status, assignee, description and its activity log, with a line to add. */
export function IssueDetail({ project, id }: { project: string; id: number }) {
  const { t, date } = useI18n();
  const [message, setMessage] = useState('');
  const issue = useQuery(issueQuery(project, id));
  const log = useLogIssue(project, id, { onSuccess: () => setMessage('') });
  if (!issue.data) return <Loading />;
  return (
    <div>
      <p className="muted">
        #{issue.data.id} · {issue.data.priority} · {t(STATUS_LABELS[issue.data.status])}
        {issue.data.assignee ? ` · ${issue.data.assignee}` : ''}
      </p>
      <p className="pre">{issue.data.description}</p>
      <h3>{t('Activity log')}</h3>
      <ul className="feed">
        {(issue.data.activity as { message?: string; author?: string | null; ts?: string }[]).map((a, i) => (
          <li key={i}>
            <time>{date(a.ts ?? null)}</time> {a.author && <strong>{a.author}</strong>} {a.message}
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          log.mutate(message);
        }}
      >
        <TextArea label={t('Add to the log')} required value={message} onChange={(e) => setMessage(e.target.value)} />
        <ErrorLine error={log.error} />
        <button type="submit">{t('Add')}</button>
      </form>
    </div>
  );
}

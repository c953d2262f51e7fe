import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { issueQuery, useLogIssue, useUpdateIssue } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Select, TextArea } from '../../ui';
import { workersQuery } from '../workers/api';
import { Avatar } from './Avatar';
import {
  entrySentence,
  PRIORITIES,
  PRIORITY_LABELS,
  STATUS_LABELS,
  STATUSES,
  type Entry,
  type Priority,
  type Status,
} from './board';

/** The longest title and description the service accepts (issues.schemas.ts). */
const TITLE_MAX = 500;
const DESCRIPTION_MAX = 100_000;
const LOG_MAX = 20_000;

/**
 * One issue in the drawer: a form to edit its title, description, status, priority and assignee (one of the
 * project's workers), its activity as sentences ("Ana moved it from Open to In progress") and a line to add.
 */
export function IssueDetail({ project, id }: { project: string; id: number }) {
  const { t, date, locale } = useI18n();
  const [message, setMessage] = useState('');
  const issue = useQuery(issueQuery(project, id));
  const workers = useQuery(workersQuery(project));
  const log = useLogIssue(project, id, { onSuccess: () => setMessage('') });
  const list = useMemo(() => {
    const f = new Intl.ListFormat(locale === 'uk' ? 'uk' : 'en', { type: 'conjunction' });
    return (items: string[]) => f.format(items);
  }, [locale]);
  if (!issue.data) return <Loading />;
  const names = (workers.data?.workers ?? []).map((w) => w.label);
  return (
    <div className="issue-detail">
      <EditIssue
        key={issue.data.updated_at}
        project={project}
        id={id}
        issue={issue.data}
        workers={issue.data.assignee && !names.includes(issue.data.assignee) ? [issue.data.assignee, ...names] : names}
      />
      <h3>{t('Activity')}</h3>
      <ol className="feed activity">
        {(issue.data.activity as Entry[]).map((a, i) => (
          <li key={i} className={a.kind === 'log' ? 'comment' : undefined}>
            {a.kind === 'log' ? (
              <>
                <strong>{a.author}</strong> <time dateTime={a.ts}>{date(a.ts ?? null)}</time>
                <p className="pre">{a.message}</p>
              </>
            ) : (
              <>
                {entrySentence(a, t, list)} <time dateTime={a.ts}>{date(a.ts ?? null)}</time>
              </>
            )}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          log.mutate(message);
        }}
      >
        <TextArea
          label={t('Add a comment')}
          required
          maxLength={LOG_MAX}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
        />
        <ErrorLine error={log.error} />
        <button type="submit">{t('Add')}</button>
      </form>
    </div>
  );
}

interface IssueFields {
  title: string;
  description: string;
  status: Status;
  priority: Priority;
  assignee: string | null;
}

/** The issue's editable fields; Save sends only what changed. */
function EditIssue({
  project,
  id,
  issue,
  workers,
}: {
  project: string;
  id: number;
  issue: IssueFields;
  workers: string[];
}) {
  const { t } = useI18n();
  const [v, setV] = useState<IssueFields>(issue);
  const update = useUpdateIssue(project, id);
  const changed = (Object.keys(v) as (keyof IssueFields)[]).filter((k) => v[k] !== issue[k]);
  return (
    <form
      className="issue-edit"
      onSubmit={(e) => {
        e.preventDefault();
        if (changed.length) update.mutate(Object.fromEntries(changed.map((k) => [k, v[k]])));
      }}
    >
      <Field
        label={t('Title')}
        required
        maxLength={TITLE_MAX}
        value={v.title}
        onChange={(e) => setV({ ...v, title: e.target.value })}
      />
      <div className="row3">
        <Select
          label={t('Status')}
          value={v.status}
          onChange={(s) => setV({ ...v, status: s as Status })}
          options={STATUSES.map((s) => ({ value: s, label: t(STATUS_LABELS[s]) }))}
        />
        <Select
          label={t('Priority')}
          value={v.priority}
          onChange={(p) => setV({ ...v, priority: p as Priority })}
          options={PRIORITIES.map((p) => ({ value: p, label: `${p} · ${t(PRIORITY_LABELS[p])}` }))}
        />
        <div className="assignee-pick">
          <Avatar name={v.assignee} empty />
          <Select
            label={t('Assignee')}
            value={v.assignee ?? ''}
            onChange={(a) => setV({ ...v, assignee: a || null })}
            options={[{ value: '', label: t('Nobody') }, ...workers.map((w) => ({ value: w, label: w }))]}
          />
        </div>
      </div>
      <TextArea
        label={t('Description')}
        rows={6}
        maxLength={DESCRIPTION_MAX}
        value={v.description}
        onChange={(e) => setV({ ...v, description: e.target.value })}
      />
      <ErrorLine
        error={update.error}
        fields={{
          title: t('Title'),
          status: t('Status'),
          priority: t('Priority'),
          assignee: t('Assignee'),
          description: t('Description'),
        }}
      />
      <button type="submit" className="primary" disabled={!changed.length || update.isPending}>
        {t('Save')}
      </button>
    </form>
  );
}

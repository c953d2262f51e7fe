import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesQuery, useCreateIssue, useMoveIssue } from '../../features/issues/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Modal, Select, TextArea } from '../../ui';
import { dropMove, STATUS_LABELS, STATUSES, toColumns, type Status } from '../../features/issues/board';
import type { TabProps } from '../../features/projects/types';
import { IssueDetail } from '../../features/issues/IssueDetail';

/** The board: a column per status; drag a card to another column, or pick the status from its menu. */
export default function Issues({ project }: TabProps) {
  const { t } = useI18n();
  const issues = useQuery(issuesQuery(project));
  const [open, setOpen] = useState<number | null>(null);
  const [creating, setCreating] = useState(false);
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState<'P0' | 'P1' | 'P2' | 'P3'>('P2');
  const [description, setDescription] = useState('');
  const [over, setOver] = useState<Status | null>(null);
  const move = useMoveIssue(project);
  const create = useCreateIssue(project, {
    onSuccess: () => {
      setCreating(false);
      setTitle('');
      setDescription('');
    },
  });
  if (issues.isPending) return <Loading />;
  const list = issues.data?.issues ?? [];
  const cols = toColumns(list);
  return (
    <div>
      <div className="actions">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('New issue')}
        </button>
      </div>
      <ErrorLine error={issues.error ?? move.error} />
      <div className="board">
        {STATUSES.map((status) => (
          <section
            key={status}
            className={over === status ? 'column over' : 'column'}
            aria-label={t(STATUS_LABELS[status])}
            data-status={status}
            onDragOver={(e) => {
              e.preventDefault();
              setOver(status);
            }}
            onDragLeave={() => setOver(null)}
            onDrop={(e) => {
              e.preventDefault();
              setOver(null);
              const m = dropMove(list, Number(e.dataTransfer.getData('text/plain')), status);
              if (m) move.mutate(m);
            }}
          >
            <h2>
              {t(STATUS_LABELS[status])} <span className="muted">{cols[status].length}</span>
            </h2>
            <ul>
              {cols[status].map((i) => (
                <li
                  key={i.id}
                  className="issue"
                  draggable
                  data-issue={i.id}
                  onDragStart={(e) => e.dataTransfer.setData('text/plain', String(i.id))}
                >
                  <button type="button" className="link" onClick={() => setOpen(i.id)}>
                    #{i.id} {i.title}
                  </button>
                  <span className={`prio ${i.priority}`}>{i.priority}</span>
                  <label className="sr-only" htmlFor={`st-${i.id}`}>
                    {t('Status of #{id}', { id: i.id })}
                  </label>
                  <select
                    id={`st-${i.id}`}
                    value={i.status}
                    onChange={(e) => move.mutate({ id: i.id, status: e.target.value as Status })}
                  >
                    {STATUSES.map((s) => (
                      <option key={s} value={s}>
                        {t(STATUS_LABELS[s])}
                      </option>
                    ))}
                  </select>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
      <Modal open={creating} onOpenChange={setCreating} title={t('New issue')}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ title, priority, ...(description ? { description } : {}) });
          }}
        >
          <Field label={t('Title')} required value={title} onChange={(e) => setTitle(e.target.value)} />
          <Select
            label={t('Priority')}
            value={priority}
            onChange={(v) => setPriority(v as typeof priority)}
            options={['P0', 'P1', 'P2', 'P3'].map((p) => ({ value: p, label: p }))}
          />
          <TextArea label={t('Description')} value={description} onChange={(e) => setDescription(e.target.value)} />
          <ErrorLine error={create.error} />
          <button type="submit" className="primary" disabled={create.isPending}>
            {t('Create')}
          </button>
        </form>
      </Modal>
      <Modal open={open !== null} onOpenChange={(o) => !o && setOpen(null)} title={t('Issue #{id}', { id: open ?? 0 })}>
        {open !== null && <IssueDetail project={project} id={open} />}
      </Modal>
    </div>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Loading, Modal, Select } from '../../ui';
import type { TabProps } from '../../features/projects/types';
import {
  presetsQuery,
  templatesQuery,
  useAddWorker,
  useDeleteWorker,
  useReorderWorkers,
  workersQuery,
  type Worker,
} from '../../features/workers/api';
import { EditWorker } from '../../features/workers/EditWorker';
import { RuntimeStatus } from '../../features/workers/RuntimeStatus';
import { moveItem } from './reorder';

/** The workers tab: the team in order (move up and down), add from a preset or template, edit, delete. */
export default function Workers({ project }: TabProps) {
  const { t } = useI18n();
  const workers = useQuery(workersQuery(project));
  const presets = useQuery(presetsQuery());
  const templates = useQuery(templatesQuery());
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<Worker | null>(null);
  const [preset, setPreset] = useState('');
  const [deleting, setDeleting] = useState<Worker | null>(null);
  const add = useAddWorker(project, { onSuccess: () => setAdding(false) });
  const remove = useDeleteWorker(project);
  const reorder = useReorderWorkers(project);
  const addChosen = () => {
    const tpl = preset.startsWith('tpl:') ? templates.data?.templates.find((x) => `tpl:${x.id}` === preset) : null;
    add.mutate(tpl ? (tpl.config as never) : { preset });
  };
  if (workers.isPending) return <Loading />;
  const list = workers.data?.workers ?? [];
  const ids = list.map((w) => w.id);
  return (
    <div>
      <div className="actions">
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          {t('Add a worker')}
        </button>
      </div>
      <ErrorLine error={workers.error ?? remove.error ?? reorder.error} />
      <ol className="workers">
        {list.map((w, i) => (
          <li key={w.id} className="card">
            <div className="worker-head">
              {w.has_avatar ? (
                <img
                  className="avatar"
                  alt=""
                  src={`/api/crm/projects/${project}/workers/${w.id}/avatar?v=${w.updated_at}`}
                />
              ) : (
                <span className="avatar" aria-hidden="true">
                  {w.icon || w.label.slice(0, 1)}
                </span>
              )}
              <div>
                <h2>{w.label}</h2>
                <p className="muted">
                  {w.role ?? w.type} · {w.model ?? t('default model')}
                </p>
                <RuntimeStatus project={project} id={w.id} />
              </div>
            </div>
            <div className="actions">
              <button
                type="button"
                aria-label={t('Move {name} up', { name: w.label })}
                disabled={i === 0}
                onClick={() => reorder.mutate(moveItem(ids, i, i - 1))}
              >
                ↑
              </button>
              <button
                type="button"
                aria-label={t('Move {name} down', { name: w.label })}
                disabled={i === list.length - 1}
                onClick={() => reorder.mutate(moveItem(ids, i, i + 1))}
              >
                ↓
              </button>
              <button type="button" onClick={() => setEditing(w)}>
                {t('Edit')}
              </button>
              <button type="button" className="danger" onClick={() => setDeleting(w)}>
                {t('Delete')}
              </button>
            </div>
          </li>
        ))}
      </ol>
      <Modal open={adding} onOpenChange={setAdding} title={t('Add a worker')}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            addChosen();
          }}
        >
          <Select
            label={t('Preset or template')}
            value={preset}
            onChange={setPreset}
            options={[
              { value: '', label: t('Choose…') },
              ...(presets.data?.presets ?? []).map((p) => ({ value: p.id, label: `${p.icon} ${p.label}` })),
              ...(templates.data?.templates ?? []).map((x) => ({
                value: `tpl:${x.id}`,
                label: `${t('Template')}: ${x.name}`,
              })),
            ]}
          />
          <ErrorLine error={add.error} />
          <button type="submit" className="primary" disabled={!preset || add.isPending}>
            {t('Add')}
          </button>
        </form>
      </Modal>
      <ConfirmDialog
        open={!!deleting}
        title={t('Delete the worker {name}?', { name: deleting?.label ?? '' })}
        confirmLabel={t('Delete')}
        busy={remove.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          if (deleting) remove.mutate(deleting.id);
          setDeleting(null);
        }}
      />
      <Modal open={!!editing} onOpenChange={(o) => !o && setEditing(null)} title={editing ? editing.label : ''}>
        {editing && <EditWorker project={project} worker={editing} onDone={() => setEditing(null)} />}
      </Modal>
    </div>
  );
}

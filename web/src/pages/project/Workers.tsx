import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading, Modal, Select, TextArea } from '../../ui';
import type { TabProps } from './Project';
import { moveItem } from './reorder';

type Worker = Awaited<ReturnType<typeof listWorkers>>['workers'][number];
const listWorkers = (project: string) =>
  must(api.GET('/api/crm/projects/{name}/workers', { params: { path: { name: project } } }));

/** Runtime status of one worker, polled every 15 s. */
function RuntimeStatus({ project, id }: { project: string; id: number }) {
  const { t, number } = useI18n();
  const rt = useQuery({
    queryKey: ['runtime', project, id],
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/workers/{id}/runtime', { params: { path: { name: project, id } } })),
    refetchInterval: 15_000,
  });
  if (!rt.data) return null;
  return (
    <span className={`status ${rt.data.status}`}>
      {rt.data.status === 'working' ? t('Working') : t('Idle')}
      {rt.data.current_skill ? ` · ${rt.data.current_skill}` : ''} ·{' '}
      {t('{used} tokens today', { used: number(rt.data.tokens_today) })}
      {rt.data.tokens_cap ? ` / ${number(rt.data.tokens_cap)}` : ''}
      <meter min={0} max={100} value={rt.data.tokens_pct} aria-label={t('Share of the daily cap used')} />
    </span>
  );
}

function Activity({ project, id }: { project: string; id: number }) {
  const { t, date } = useI18n();
  const a = useQuery({
    queryKey: ['worker-activity', project, id],
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/workers/{id}/activity', { params: { path: { name: project, id } } })),
  });
  if (a.isPending) return <Loading />;
  if (!a.data?.events.length) return <p className="muted">{t('No activity yet.')}</p>;
  return (
    <ul className="feed">
      {a.data.events.map((e, i) => (
        <li key={i}>
          <time>{date(e.when)}</time> <strong>{e.title}</strong> {e.detail}
        </li>
      ))}
    </ul>
  );
}

function BotBinding({ project, worker }: { project: string; worker: Worker }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const [token, setToken] = useState('');
  const path = { name: project, id: worker.id };
  const suggest = useMutation({
    mutationFn: () =>
      must(api.POST('/api/crm/projects/{name}/workers/{id}/suggest-bot-username', { params: { path } })),
  });
  const bind = useMutation({
    mutationFn: () =>
      must(api.POST('/api/crm/projects/{name}/workers/{id}/telegram-token', { params: { path }, body: { token } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['workers', project] }),
  });
  const unbind = useMutation({
    mutationFn: () => must(api.DELETE('/api/crm/projects/{name}/workers/{id}/telegram-token', { params: { path } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['workers', project] }),
  });
  return (
    <div>
      <h3>{t('Messenger bot')}</h3>
      {worker.bot_username ? (
        <p>
          @{worker.bot_username}{' '}
          <button type="button" onClick={() => unbind.mutate()}>
            {t('Unbind')}
          </button>
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            bind.mutate();
          }}
        >
          <button type="button" className="link" onClick={() => suggest.mutate()}>
            {t('Suggest bot names')}
          </button>
          {suggest.data && <p className="muted">{suggest.data.candidates.map((c) => `@${c}`).join(', ')}</p>}
          <Field
            label={t('Bot token')}
            type="password"
            autoComplete="off"
            required
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
          <button type="submit">{t('Bind the bot')}</button>
        </form>
      )}
      <ErrorLine error={bind.error ?? unbind.error ?? suggest.error} />
    </div>
  );
}

function EditWorker({ project, worker, onDone }: { project: string; worker: Worker; onDone: () => void }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const tiers = useQuery({ queryKey: ['model-tiers'], queryFn: () => must(api.GET('/api/crm/model-tiers')) });
  const [label, setLabel] = useState(worker.label);
  const [model, setModel] = useState(worker.model ?? '');
  const [prompt, setPrompt] = useState(worker.system_prompt);
  const [mcpServers, setMcpServers] = useState((worker.mcp_servers ?? []).join(', '));
  const [avatar, setAvatar] = useState<File | null>(null);
  const path = { name: project, id: worker.id };
  const save = useMutation({
    mutationFn: async () => {
      await must(
        api.PUT('/api/crm/projects/{name}/workers/{id}', {
          params: { path },
          body: {
            label,
            model: model || null,
            system_prompt: prompt,
            mcp_servers: mcpServers
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
          },
        }),
      );
      if (avatar) {
        const fd = new FormData();
        fd.append('file', avatar);
        await must(
          api.POST('/api/crm/projects/{name}/workers/{id}/avatar', {
            params: { path },
            body: {} as never,
            bodySerializer: () => fd,
          }),
        );
      }
    },
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: ['workers', project] });
      onDone();
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Field label={t('Name')} required value={label} onChange={(e) => setLabel(e.target.value)} />
      <Select
        label={t('Model tier')}
        value={model}
        onChange={setModel}
        options={[
          { value: '', label: t('Default') },
          ...(tiers.data?.tiers ?? []).map((tier) => ({ value: tier.model, label: `${tier.label} — ${tier.hint}` })),
        ]}
      />
      <TextArea
        label={t('Instructions (system prompt)')}
        rows={8}
        value={prompt}
        onChange={(e) => setPrompt(e.target.value)}
      />
      <Field
        label={t('MCP servers (names, comma-separated)')}
        hint={t('The project’s outside MCP servers whose tools this worker uses (the Agents tab).')}
        value={mcpServers}
        onChange={(e) => setMcpServers(e.target.value)}
      />
      <div className="field">
        <label htmlFor="avatar">{t('Avatar (PNG, JPEG or WebP)')}</label>
        <input
          id="avatar"
          type="file"
          accept="image/png,image/jpeg,image/webp"
          onChange={(e) => setAvatar(e.target.files?.[0] ?? null)}
        />
      </div>
      <ErrorLine error={save.error} />
      <button type="submit" className="primary" disabled={save.isPending}>
        {t('Save')}
      </button>
      <BotBinding project={project} worker={worker} />
      <h3>{t('Activity')}</h3>
      <Activity project={project} id={worker.id} />
    </form>
  );
}

export default function Workers({ project }: TabProps) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const workers = useQuery({ queryKey: ['workers', project], queryFn: () => listWorkers(project) });
  const presets = useQuery({ queryKey: ['presets'], queryFn: () => must(api.GET('/api/crm/workers/presets')) });
  const templates = useQuery({ queryKey: ['templates'], queryFn: () => must(api.GET('/api/crm/workers/templates')) });
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<Worker | null>(null);
  const [preset, setPreset] = useState('');
  const invalidate = () => qc.invalidateQueries({ queryKey: ['workers', project] });
  const add = useMutation({
    mutationFn: () => {
      const tpl = preset.startsWith('tpl:') ? templates.data?.templates.find((x) => `tpl:${x.id}` === preset) : null;
      const body = tpl ? (tpl.config as never) : { preset };
      return must(api.POST('/api/crm/projects/{name}/workers', { params: { path: { name: project } }, body }));
    },
    onSuccess: () => {
      invalidate();
      setAdding(false);
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/workers/{id}', { params: { path: { name: project, id } } })),
    onSuccess: invalidate,
  });
  const reorder = useMutation({
    mutationFn: (order: number[]) =>
      must(
        api.POST('/api/crm/projects/{name}/workers/reorder', { params: { path: { name: project } }, body: { order } }),
      ),
    onSuccess: invalidate,
  });
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
              <button
                type="button"
                className="danger"
                onClick={() => window.confirm(t('Delete the worker {name}?', { name: w.label })) && remove.mutate(w.id)}
              >
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
            add.mutate();
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
      <Modal open={!!editing} onOpenChange={(o) => !o && setEditing(null)} title={editing ? editing.label : ''}>
        {editing && <EditWorker project={project} worker={editing} onDone={() => setEditing(null)} />}
      </Modal>
    </div>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Select, TextArea } from '../../ui';
import { Activity } from './Activity';
import { modelTiersQuery, useEditWorker, type Worker } from './api';
import { BotBinding } from './BotBinding';

/** The form editing one worker: name, model tier, instructions, MCP servers, avatar; its bot and activity. */
export function EditWorker({ project, worker, onDone }: { project: string; worker: Worker; onDone: () => void }) {
  const { t } = useI18n();
  const tiers = useQuery(modelTiersQuery());
  const [label, setLabel] = useState(worker.label);
  const [model, setModel] = useState(worker.model ?? '');
  const [prompt, setPrompt] = useState(worker.system_prompt);
  const [mcpServers, setMcpServers] = useState((worker.mcp_servers ?? []).join(', '));
  const [avatar, setAvatar] = useState<File | null>(null);
  const save = useEditWorker(project, worker.id, { onSuccess: onDone });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({
          body: {
            label,
            model: model || null,
            system_prompt: prompt,
            mcp_servers: mcpServers
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
          },
          avatar,
        });
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

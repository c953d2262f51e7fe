import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useCreateToken } from '../../features/account/api';
import { mcpServersQuery, useAddMcpServer, useRemoveMcpServer } from '../../features/agents/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Loading } from '../../ui';
import { agentSnippets } from './agentConfig';
import type { TabProps } from '../../features/projects/types';

/**
 * The agents tab (`/projects/<name>/agents`): how to connect a coding agent to this project over MCP (a token
 * for this project, made here and shown once, and the text to paste per client), and the outside MCP servers
 * the project's workers may use (register, list, remove).
 */
export default function Agents({ project }: TabProps) {
  const { t, date } = useI18n();
  const [token, setToken] = useState<string | null>(null);
  const make = useCreateToken({ onSuccess: (r) => setToken(r.token) });
  const snippets = agentSnippets(window.location.origin, token ?? '<access token>');

  const servers = useQuery(mcpServersQuery(project));
  const [form, setForm] = useState({ name: '', url: '', header: '', value: '' });
  const add = useAddMcpServer(project, { onSuccess: () => setForm({ name: '', url: '', header: '', value: '' }) });
  const remove = useRemoveMcpServer(project);

  return (
    <div>
      <h2>{t('Connect a coding agent')}</h2>
      <p>
        {t(
          'Agents that speak MCP (Claude Code, Cursor, VS Code, Codex) work on this project’s issues, wiki, search, notes, skills and pins with an access token.',
        )}{' '}
        <Link to="/account?tab=tokens">{t('Manage your tokens')}</Link>
      </p>
      <button
        type="button"
        className="primary"
        onClick={() =>
          make.mutate({
            name: `agent: ${project}`.slice(0, 100),
            scopes: ['read', 'write'],
            project,
            expires_in_days: 90,
          })
        }
      >
        {t('Create a token for this project')}
      </button>
      <ErrorLine error={make.error} />
      {token && <p role="status">{t('Copy the token now: it is not shown again.')}</p>}
      {snippets.map((s) => (
        <div key={s.where}>
          <h3>
            {s.client} <span className="muted">{s.where}</span>
          </h3>
          <pre className="cli-steps">{s.text}</pre>
        </div>
      ))}

      <h2>{t('Outside MCP servers for workers')}</h2>
      <p className="muted">
        {t('A worker uses the servers named in its MCP servers field; their tools reach it as server__tool.')}
      </p>
      {servers.isPending ? (
        <Loading />
      ) : (
        <ul className="list">
          {servers.data?.servers.map((s) => (
            <li key={s.id}>
              <strong>{s.name}</strong> <code>{s.url}</code>{' '}
              <span className="muted">
                {s.tools.join(', ') || t('no tools')} · {date(s.updated_at)}
              </span>{' '}
              <button type="button" aria-label={t('Remove the server')} onClick={() => remove.mutate(s.id)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate({
            name: form.name,
            url: form.url,
            ...(form.header ? { headers: { [form.header]: form.value } } : {}),
          });
        }}
      >
        <Field
          label={t('Server name')}
          required
          pattern="[a-z0-9][a-z0-9_\-]{0,29}"
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
        />
        <Field
          label={t('Address (Streamable HTTP)')}
          required
          type="url"
          value={form.url}
          onChange={(e) => setForm({ ...form, url: e.target.value })}
        />
        <Field
          label={t('Header name (optional)')}
          value={form.header}
          onChange={(e) => setForm({ ...form, header: e.target.value })}
        />
        <Field
          label={t('Header value (stored sealed)')}
          type="password"
          autoComplete="off"
          value={form.value}
          onChange={(e) => setForm({ ...form, value: e.target.value })}
        />
        <button type="submit">{t('Add the server')}</button>
        <ErrorLine error={add.error ?? remove.error ?? servers.error} />
      </form>
    </div>
  );
}

import { describe, expect, it } from 'vitest';
import { agentSnippets, TOKEN_ENV } from './agentConfig';

describe('agentSnippets', () => {
  const snippets = agentSnippets('https://crm.example/', 'arc_pat_abc');

  it('points every client at {origin}/mcp with the bearer token', () => {
    for (const s of snippets) expect(s.text, s.where).toContain('https://crm.example/mcp');
    expect(snippets.map((s) => s.client)).toEqual([
      'Claude Code',
      'Claude Code',
      'Cursor',
      'VS Code',
      'Codex',
      'Any MCP client',
    ]);
  });

  it('writes each client’s own file shape', () => {
    const byWhere = Object.fromEntries(snippets.map((s) => [s.where, s.text]));
    expect(JSON.parse(byWhere['.mcp.json'])).toEqual({
      mcpServers: {
        crm: { type: 'http', url: 'https://crm.example/mcp', headers: { Authorization: 'Bearer arc_pat_abc' } },
      },
    });
    expect(JSON.parse(byWhere['.cursor/mcp.json']).mcpServers.crm).toEqual({
      url: 'https://crm.example/mcp',
      headers: { Authorization: 'Bearer arc_pat_abc' },
    });
    expect(JSON.parse(byWhere['.vscode/mcp.json']).servers.crm.type).toBe('http');
    expect(byWhere['~/.codex/config.toml']).toContain(`bearer_token_env_var = "${TOKEN_ENV}"`);
    expect(byWhere.terminal).toBe(
      'claude mcp add --transport http crm https://crm.example/mcp --header "Authorization: Bearer arc_pat_abc"',
    );
  });
});

/**
 * What to paste into a coding agent to connect it to this service's MCP server (`{origin}/mcp`, Streamable
 * HTTP, `Authorization: Bearer <access token>`), per client. Pure: the project page shows these.
 */

export interface AgentSnippet {
  /** The client's name. */
  client: string;
  /** Where it goes (a file, or a terminal). */
  where: string;
  /** The text to paste. */
  text: string;
}

/** The environment variable the snippets that read the token from the environment use. */
export const TOKEN_ENV = 'CRM_MCP_TOKEN';

/**
 * The snippets for Claude Code, Cursor, VS Code, Codex and any other client.
 * @param origin the service's origin (`https://crm.example`); `token` the access token, or a placeholder.
 */
export function agentSnippets(origin: string, token: string, serverName = 'crm'): AgentSnippet[] {
  const url = `${origin.replace(/\/+$/, '')}/mcp`;
  const auth = `Bearer ${token}`;
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return [
    {
      client: 'Claude Code',
      where: 'terminal',
      text: `claude mcp add --transport http ${serverName} ${url} --header "Authorization: ${auth}"`,
    },
    {
      client: 'Claude Code',
      where: '.mcp.json',
      text: json({ mcpServers: { [serverName]: { type: 'http', url, headers: { Authorization: auth } } } }),
    },
    {
      client: 'Cursor',
      where: '.cursor/mcp.json',
      text: json({ mcpServers: { [serverName]: { url, headers: { Authorization: auth } } } }),
    },
    {
      client: 'VS Code',
      where: '.vscode/mcp.json',
      text: json({ servers: { [serverName]: { type: 'http', url, headers: { Authorization: auth } } } }),
    },
    {
      client: 'Codex',
      where: '~/.codex/config.toml',
      text: `# export ${TOKEN_ENV}='${token}'\n[mcp_servers.${serverName}]\nurl = "${url}"\nbearer_token_env_var = "${TOKEN_ENV}"`,
    },
    {
      client: 'Any MCP client',
      where: 'Streamable HTTP',
      text: `URL: ${url}\nHeader: Authorization: ${auth}`,
    },
  ];
}

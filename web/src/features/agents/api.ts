/** The agents tab's data: the project's outside MCP servers (query keys from `mcpServerKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of MCP servers. */
export const mcpServerKeys = {
  list: (project: string) => [...projectKeys.one(project), 'mcp-servers'] as const,
};

/** The project's outside MCP servers. */
export const mcpServersQuery = (project: string) =>
  queryOptions({
    queryKey: mcpServerKeys.list(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/mcp-servers', { params: { path: { name: project } } })),
  });

type AddBody = JsonBody<'/api/crm/projects/{name}/mcp-servers', 'post'>;

/** Register an MCP server; refreshes the list. */
export function useAddMcpServer(project: string, after?: After<unknown, AddBody>) {
  return useInvalidatingMutation(
    (body: AddBody) =>
      must(api.POST('/api/crm/projects/{name}/mcp-servers', { params: { path: { name: project } }, body })),
    () => [mcpServerKeys.list(project)],
    after,
  );
}

/** Remove an MCP server; refreshes the list. */
export function useRemoveMcpServer(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/mcp-servers/{id}', { params: { path: { name: project, id } } })),
    () => [mcpServerKeys.list(project)],
  );
}

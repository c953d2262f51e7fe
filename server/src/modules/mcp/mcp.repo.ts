/**
 * The SQL of a project's outside MCP servers (`mcp_servers`): address, sealed headers, the tools last listed.
 * Every read filters by the project.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

/** A server as its project sees it (never the sealed headers). */
export interface McpServerRow {
  id: number;
  name: string;
  url: string;
  header_names: string[];
  tools: Array<{ name: string; description: string }>;
  created_at: Date;
  updated_at: Date;
}

const COLS = ['id', 'name', 'url', 'header_names', 'tools', 'created_at', 'updated_at'] as const;

export function createMcpRepo(db: Kysely<DB>) {
  return {
    /** The project's servers by name. */
    list: (projectId: number): Promise<McpServerRow[]> =>
      db
        .selectFrom('mcp_servers')
        .select([...COLS])
        .where('project_id', '=', projectId)
        .orderBy('name')
        .execute(),

    /** The project's servers named in `names`, with their sealed headers (for connecting). */
    forConnecting: (projectId: number, names: string[]) =>
      names.length
        ? db
            .selectFrom('mcp_servers')
            .select(['id', 'name', 'url', 'headers_enc'])
            .where('project_id', '=', projectId)
            .where('name', 'in', names)
            .orderBy('name')
            .execute()
        : Promise.resolve([]),

    /** Whether the project has a server of this name. */
    async exists(projectId: number, name: string): Promise<boolean> {
      const r = await db
        .selectFrom('mcp_servers')
        .select('id')
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .executeTakeFirst();
      return !!r;
    },

    /** Store a server. @throws the unique violation (23505) when the name is taken in the project. */
    insert: (s: {
      projectId: number;
      name: string;
      url: string;
      headersEnc: string | null;
      headerNames: string[];
      tools: Array<{ name: string; description: string }>;
      createdBy: number;
    }): Promise<McpServerRow> =>
      db
        .insertInto('mcp_servers')
        .values({
          project_id: s.projectId,
          name: s.name,
          url: s.url,
          headers_enc: s.headersEnc,
          header_names: JSON.stringify(s.headerNames),
          tools: JSON.stringify(s.tools),
          created_by: s.createdBy,
        })
        .returning([...COLS])
        .executeTakeFirstOrThrow(),

    /** Remember the tools a server listed last. */
    async setTools(id: number, tools: Array<{ name: string; description: string }>): Promise<void> {
      await db
        .updateTable('mcp_servers')
        .set({ tools: JSON.stringify(tools), updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    },

    /** Delete one of the project's servers. @returns whether there was one. */
    async remove(projectId: number, id: number): Promise<boolean> {
      const r = await db
        .deleteFrom('mcp_servers')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type McpRepo = ReturnType<typeof createMcpRepo>;

/**
 * The service's MCP server (docs/api.md, The MCP server): the Model Context Protocol over Streamable HTTP at
 * `{app_url}/mcp`, with the official TypeScript SDK (`@modelcontextprotocol/sdk`), so coding agents that speak
 * MCP (Claude Code, Codex, Cursor, VS Code, …) work on a project's issues, wiki, index, notes, skills and pins.
 *
 * - Stateless: every POST builds a server bound to the caller and a transport without sessions (JSON answers);
 *   GET and DELETE (the optional stream and session end) answer 405.
 * - The caller is the auth hook's: an access token (`Authorization: Bearer arc_pat_…`) or a session token. Each
 *   tool and resource needs a scope (`TOOL_SCOPES`); a token without it gets a tool error naming the scope,
 *   never a result. Every call goes through the areas' own services with the caller, so the project access
 *   rules (owner or admin; a bound token's one project) hold as they do over REST.
 * - `project` (the project's technical name) may be omitted when the token is bound to one project.
 * - `note_ask` calls the notes area's grounded chat, metered there like the web UI's.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { grantAllows, type Actor } from '../../http/auth.ts';
import { AppError, BadRequest, Forbidden } from '../../http/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { IssuesService } from '../issues/issues.service.ts';
import type { KnowledgeService } from '../knowledge/knowledge.service.ts';
import type { NoteChat } from '../notes/notes.chat.ts';
import type { PinsService } from '../pins/pins.service.ts';
import type { ProjectsService } from '../projects/projects.service.ts';
import type { SkillsService } from '../skills/skills.service.ts';
import type { WikiService } from '../wiki/wiki.service.ts';

/** The scope each tool needs (read: looking; write: changing, or asking a model on the caller's budget). */
export const TOOL_SCOPES = {
  issues_list: 'read',
  issue_create: 'write',
  issue_take: 'write',
  issue_log: 'write',
  issue_close: 'write',
  wiki_read: 'read',
  wiki_write: 'write',
  search: 'read',
  note_ask: 'write',
  skills_list: 'read',
  skill_get: 'read',
  pins_list: 'read',
} as const;
export type ToolName = keyof typeof TOOL_SCOPES;

/** Resources listed at most per `resources/list` (wiki pages and skills of the caller's projects). */
const RESOURCES_MAX = 500;
/** Projects walked at most for a resource listing. */
const LIST_PROJECTS_MAX = 20;
/** Characters of a tool's JSON answer at most (longer answers are cut, saying so). */
const ANSWER_MAX = 200_000;

export interface McpServerDeps {
  issues: Pick<IssuesService, 'list' | 'create' | 'update' | 'log' | 'get'>;
  wiki: Pick<WikiService, 'tree' | 'read' | 'save'>;
  knowledge: Pick<KnowledgeService, 'search'>;
  notes: Pick<NoteChat, 'chat'>;
  skills: Pick<SkillsService, 'listForProject'>;
  pins: Pick<PinsService, 'listPins'>;
  projects: Pick<ProjectsService, 'list'>;
  /** The service's release, told to clients in `initialize`. */
  version: string;
  log: Pick<Logger, 'error'>;
}

/**
 * One shape per tool, made with zod `z` (imported at first use: loaded at start it cost ~0.2 s and ~19 MiB of every
 * start; bench/README.md, "Start-up"). Made once; every request's server reuses them.
 */
function makeShapes(z: typeof import('zod').z) {
  const Project = z
    .string()
    .min(1)
    .max(40)
    .optional()
    .describe("the project's technical name; may be omitted when the token is bound to one project");
  const IssueId = z.number().int().min(1).describe('the issue number (per project)');
  const _Status = z.enum(['open', 'in_progress', 'blocked', 'deferred', 'closed']);

  return {
    issues_list: {
      project: Project,
      status: z
        .string()
        .regex(/^(open|in_progress|blocked|deferred|closed)(,(open|in_progress|blocked|deferred|closed))*$/)
        .optional()
        .describe('one status or a comma list (open, in_progress, blocked, deferred, closed)'),
      assignee: z.string().max(200).optional().describe('exact assignee; "none" for unassigned'),
      limit: z.number().int().min(1).max(500).optional().describe('issues at most (default 50)'),
      offset: z.number().int().min(0).optional(),
    },
    issue_create: {
      project: Project,
      title: z.string().min(1).max(500),
      description: z.string().max(100_000).optional(),
      priority: z.enum(['P0', 'P1', 'P2', 'P3']).optional().describe('P0 most urgent; default P2'),
      assignee: z.string().max(200).optional(),
    },
    issue_take: {
      project: Project,
      id: IssueId,
      assignee: z.string().min(1).max(200).optional().describe('who takes it (default: you)'),
    },
    issue_log: { project: Project, id: IssueId, message: z.string().min(1).max(20_000) },
    issue_close: {
      project: Project,
      id: IssueId,
      message: z.string().min(1).max(20_000).optional().describe('a closing note, logged first'),
    },
    wiki_read: {
      project: Project,
      path: z.string().min(1).max(500).optional().describe('a page path (e.g. guides/setup.md); omit for the tree'),
    },
    wiki_write: {
      project: Project,
      path: z.string().min(1).max(500),
      content: z.string().max(1_000_000).describe('the whole page (Markdown); replaces it'),
    },
    search: {
      project: Project,
      query: z.string().min(1).max(2000),
      k: z.number().int().min(1).max(25).optional().describe('hits (default 6)'),
      doc_types: z
        .string()
        .max(200)
        .optional()
        .describe('comma list of document types to search (issue, wiki, skill, memory, note_source, …)'),
    },
    note_ask: {
      project: Project,
      note_id: z.number().int().min(1).describe('the research note'),
      question: z.string().min(1).max(8000),
      source_ids: z.array(z.number().int().min(1)).max(500).optional().describe('ground in these sources only'),
    },
    skills_list: { project: Project },
    skill_get: {
      project: Project,
      name: z.string().min(1).max(200).optional(),
      id: z.number().int().min(1).optional(),
    },
    pins_list: { project: Project },
  } satisfies Record<ToolName, z.ZodRawShape>;
}
type Shapes = ReturnType<typeof makeShapes>;
let shapesMade: Shapes | undefined;

const DESCRIPTIONS: Record<ToolName, string> = {
  issues_list: "List the project's issues, newest first, filtered by status and assignee.",
  issue_create: 'Create an issue (status open).',
  issue_take: 'Take an issue: status in_progress, assigned to you (or to `assignee`).',
  issue_log: 'Append a progress note to an issue.',
  issue_close: 'Close an issue, logging `message` first when given.',
  wiki_read: "Read a wiki page by path, or the wiki's tree of pages without a path.",
  wiki_write: 'Create or replace a wiki page.',
  search:
    "Semantic search over the project's index (issues, wiki, skills, notes, transcripts, memory): hits with " +
    'their source and location.',
  note_ask: "Ask a research note's grounded chat; the answer cites the note's sources (metered on your budget).",
  skills_list: 'The skills the project sees (global ones and its own).',
  skill_get: 'One skill the project sees, by name or id, with its content.',
  pins_list: "The project's pinned notes.",
};

/** A tool answer: the data as JSON text (cut at ANSWER_MAX characters). */
function answer(data: unknown): CallToolResult {
  let text = JSON.stringify(data);
  if (text.length > ANSWER_MAX) text = `${text.slice(0, ANSWER_MAX)}… (cut at ${ANSWER_MAX} characters)`;
  return { content: [{ type: 'text', text }] };
}

/** A tool error the model can read: `<code>: <message>`. */
const toolError = (code: string, message: string): CallToolResult => ({
  content: [{ type: 'text', text: `${code}: ${message}` }],
  isError: true,
});

/** Collect a note chat's event stream into one answer. */
async function drainNoteChat(events: AsyncIterable<{ event?: string; data: unknown }>) {
  let text = '';
  let done: Record<string, unknown> = {};
  let citations: unknown;
  let failure: { error: string; message: string } | undefined;
  for await (const e of events) {
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.event === 'text_delta' && typeof d.delta === 'string') text += d.delta;
    else if (e.event === 'citations') citations = d.citations;
    else if (e.event === 'error') failure = { error: String(d.error), message: String(d.message) };
    else if (e.event === 'done') done = d;
  }
  return { text, done, citations, failure };
}

/**
 * Build the MCP server for one request of `actor` (its access token's grant, if any, bounds every tool).
 * The SDK is imported at first use (loaded at start it costs ~0.2 s and ~30 MiB of every start).
 * @returns an `McpServer` with the tools and resources above; the caller connects it to a transport.
 */
export async function createMcpServer(deps: McpServerDeps, actor: Actor): Promise<McpServer> {
  const { McpServer, ResourceTemplate } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const SHAPES = (shapesMade ??= makeShapes((await import('zod')).z));
  const server = new McpServer(
    { name: 'crm-service', version: deps.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Work on a project of the CRM service: its issues (list, take, log, close, create), wiki, semantic ' +
        "index, research notes, skills and pins. Pass the project's technical name as `project` unless your " +
        'token is bound to one project.',
    },
  );
  const grant = actor.grant;
  const allowed = (scope: 'read' | 'write') => !grant || grantAllows(grant, scope);

  /** The project a call names, or the token's own. @throws BadRequest `project_required`. */
  const projectOf = (given: string | undefined): string => {
    const name = given ?? grant?.projectName ?? undefined;
    if (!name) throw new BadRequest('project_required', 'Name the project (its technical name) in `project`.');
    return name;
  };

  /** Register a tool whose handler runs only within its scope; service errors become tool errors. */
  function tool<N extends ToolName>(
    name: N,
    run: (args: z.infer<z.ZodObject<Shapes[N]>>, signal: AbortSignal) => Promise<unknown>,
  ): void {
    const scope = TOOL_SCOPES[name];
    server.registerTool(
      name,
      {
        description: DESCRIPTIONS[name],
        inputSchema: SHAPES[name],
        annotations: { readOnlyHint: scope === 'read' },
      },
      (async (args: z.infer<z.ZodObject<Shapes[N]>>, extra: { signal: AbortSignal }) => {
        if (!allowed(scope))
          return toolError('insufficient_scope', `This token lacks the ${scope} scope, which ${name} needs.`);
        try {
          return answer(await run(args, extra.signal));
        } catch (err) {
          if (err instanceof AppError) return toolError(err.code, err.message);
          deps.log.error({ err: (err as Error).message, tool: name }, 'MCP tool failed');
          return toolError('internal_error', `The tool ${name} failed on our side; try again.`);
        }
      }) as never,
    );
  }

  tool('issues_list', (a) =>
    deps.issues.list(actor, projectOf(a.project), {
      status: a.status,
      assignee: a.assignee,
      limit: a.limit,
      offset: a.offset,
    }),
  );
  tool('issue_create', (a) =>
    deps.issues.create(actor, projectOf(a.project), {
      title: a.title,
      description: a.description,
      priority: a.priority,
      assignee: a.assignee,
    }),
  );
  tool('issue_take', (a) =>
    deps.issues.update(actor, projectOf(a.project), a.id, {
      status: 'in_progress',
      assignee: a.assignee ?? (actor.name || actor.email),
    }),
  );
  tool(
    'issue_log',
    async (a) => (await deps.issues.log(actor, projectOf(a.project), a.id, { message: a.message })).entry,
  );
  tool('issue_close', async (a) => {
    const project = projectOf(a.project);
    await deps.issues.get(actor, project, a.id); // 404 before anything is written
    if (a.message) await deps.issues.log(actor, project, a.id, { message: a.message });
    return deps.issues.update(actor, project, a.id, { status: 'closed' });
  });
  tool('wiki_read', (a) =>
    a.path ? deps.wiki.read(actor, projectOf(a.project), a.path) : deps.wiki.tree(actor, projectOf(a.project)),
  );
  tool('wiki_write', async (a) => {
    const page = await deps.wiki.save(actor, projectOf(a.project), { path: a.path, content: a.content });
    return { path: page.path, title: page.title, updated_at: page.updated_at };
  });
  tool('search', async (a) => {
    const r = await deps.knowledge.search(actor, projectOf(a.project), {
      q: a.query,
      k: a.k,
      doc_types: a.doc_types,
    } as Parameters<KnowledgeService['search']>[2]);
    return {
      query: r.query,
      project: r.project,
      hits: r.hits.map((h) => ({
        rank: h.rank,
        source: { doc_type: h.doc_type, doc_id: h.doc_id, title: h.title, scope: h.scope },
        location: { chunk_ix: h.chunk_ix, ...h.location },
        distance: h.distance,
        text: h.text,
      })),
    };
  });
  tool('note_ask', async (a, signal) => {
    const { events } = await deps.notes.chat(actor, projectOf(a.project), a.note_id, {
      message: a.question,
      ...(a.source_ids ? { selectedSourceIds: a.source_ids } : {}),
    });
    const it = events[Symbol.asyncIterator]();
    signal.addEventListener('abort', () => void it.return?.(undefined), { once: true });
    const out = await drainNoteChat({ [Symbol.asyncIterator]: () => it });
    if (out.failure) throw new AppError(502, out.failure.error, out.failure.message);
    return {
      answer: out.text,
      message_id: out.done.message_id ?? null,
      sources: out.done.sources ?? [],
      ...(out.citations ? { citations: out.citations } : {}),
      usage: out.done.usage ?? null,
    };
  });
  tool('skills_list', async (a) => {
    const { skills } = await deps.skills.listForProject(actor, projectOf(a.project));
    return { skills: skills.map((s) => ({ id: s.id, name: s.name, description: s.description })) };
  });
  tool('skill_get', async (a) => {
    if (a.name === undefined && a.id === undefined) throw new BadRequest('invalid_request', 'Give `name` or `id`.');
    const { skills } = await deps.skills.listForProject(actor, projectOf(a.project));
    const s = skills.find((k) => (a.id !== undefined ? k.id === a.id : k.name === a.name));
    if (!s) throw new AppError(404, 'skill_not_found', 'The project sees no skill of that name or id.');
    return s;
  });
  tool('pins_list', (a) => deps.pins.listPins(actor, projectOf(a.project)));

  // Resources: wiki pages and skills of the token's project, or of the caller's projects.
  const readable = () => {
    if (!allowed('read')) throw new Forbidden('This token lacks the read scope.', 'insufficient_scope');
  };
  const projectNames = async (): Promise<string[]> => {
    if (grant?.projectName) return [grant.projectName];
    const { projects } = await deps.projects.list(actor);
    return projects.slice(0, LIST_PROJECTS_MAX).map((p) => p.name);
  };
  const text = (uri: URL, mimeType: string, body: string): ReadResourceResult => ({
    contents: [{ uri: uri.href, mimeType, text: body }],
  });
  const one = (v: string | string[]) => (Array.isArray(v) ? v.join('/') : v);

  server.registerResource(
    'wiki-page',
    new ResourceTemplate('wiki://{project}/{+path}', {
      list: async () => {
        readable();
        const resources: Array<{ uri: string; name: string; mimeType: string }> = [];
        const walk = (project: string, nodes: Array<{ path: string; title: string; children?: unknown[] }>) => {
          for (const n of nodes) {
            if (resources.length >= RESOURCES_MAX) return;
            if (n.children) walk(project, n.children as typeof nodes);
            else
              resources.push({
                uri: `wiki://${project}/${n.path}`,
                name: `${project}: ${n.title}`,
                mimeType: 'text/markdown',
              });
          }
        };
        for (const p of await projectNames()) walk(p, (await deps.wiki.tree(actor, p)).tree);
        return { resources };
      },
    }),
    { description: "A project's wiki page (Markdown)", mimeType: 'text/markdown' },
    async (uri, v) => {
      readable();
      const page = await deps.wiki.read(actor, one(v.project), decodeURIComponent(one(v.path)));
      return text(uri, 'text/markdown', page.content);
    },
  );
  server.registerResource(
    'skill',
    new ResourceTemplate('skill://{project}/{name}', {
      list: async () => {
        readable();
        const resources: Array<{ uri: string; name: string; description: string; mimeType: string }> = [];
        for (const p of await projectNames()) {
          for (const s of (await deps.skills.listForProject(actor, p)).skills) {
            if (resources.length >= RESOURCES_MAX) break;
            resources.push({
              uri: `skill://${p}/${encodeURIComponent(s.name)}`,
              name: `${p}: ${s.name}`,
              description: s.description,
              mimeType: 'text/markdown',
            });
          }
        }
        return { resources };
      },
    }),
    { description: 'A skill a project sees (Markdown)', mimeType: 'text/markdown' },
    async (uri, v) => {
      readable();
      const name = decodeURIComponent(one(v.name));
      const { skills } = await deps.skills.listForProject(actor, one(v.project));
      const s = skills.find((k) => k.name === name);
      if (!s) throw new AppError(404, 'skill_not_found', 'The project sees no skill of that name.');
      return text(uri, 'text/markdown', s.content);
    },
  );
  return server;
}

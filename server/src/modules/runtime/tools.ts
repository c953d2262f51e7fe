/**
 * The agent's tool registry. Every tool acts on one project only; the runtime hands it a `ToolContext`.
 * Areas plug their own tools in with `deps.agentTools.register({...})`; a tool that `needs` a port
 * (ports.ts) is offered only when the runtime was given that port.
 *
 * Which tools a worker gets: the names in its `tools` list (group names `files`, `issues`, `skills`,
 * `wiki`, `search` and the agent-CLI names Read/Write/Edit/Glob/LS/Grep are expanded); an empty list
 * means every registered tool. `create_issue` is offered to every worker, whatever its list. No shell tool
 * exists: commands may only run inside the user's container, which this runtime does not drive yet.
 *
 * Run tool sources (`registerSource`) add tools that depend on the run: a worker's outside MCP servers
 * (modules/mcp/mcp.port.ts) are connected at the run's start (`forRun`) and closed at its end.
 */
import type { ProjectRef } from '../../access/access.ts';
import type { AgentPorts } from './ports.ts';
import type { LlmTool } from '../models/model-gateway.ts';
import type { ToolEffect } from './journal.ts';

/** The worker a run acts as. */
export interface RunWorker {
  id: number;
  label: string;
  role: string | null;
  focus_dirs: string[];
  tools: string[];
}

/** What a tool may use while running. */
export interface ToolContext {
  project: ProjectRef;
  worker: RunWorker;
  runId: number;
  /** The project owner. */
  userId: number;
  ports: AgentPorts;
  /** Write an activity event for this worker (best effort). */
  activity(type: string, title: string, detail?: string | null, payload?: Record<string, unknown>): Promise<void>;
  /** Set or clear the worker's `current_skill`. */
  setCurrentSkill(name: string | null): Promise<void>;
  signal: AbortSignal;
  /** The id of the tool call being run (the model's), for tools made idempotent by it (journal.ts). */
  callId?: string;
}

/** A tool's answer: `content` goes back to the model; `data` is shown to the client (`tool_result` event). */
export interface ToolOutcome {
  content: string;
  is_error?: boolean;
  data?: Record<string, unknown>;
}

export interface AgentTool {
  name: string;
  description: string;
  /** JSON Schema of the input object (`required` is checked before `run`). */
  input_schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  /** The port this tool needs. */
  needs?: keyof AgentPorts;
  /** Group name a worker's `tools` list may use for it. */
  group: string;
  /**
   * What running it again does (journal.ts): `read` (no effect), `idempotent` (the same state again) or `write`
   * (default: more effects). A run interrupted inside a `write` tool is not repeated after a crash.
   */
  effect?: ToolEffect;
  run(ctx: ToolContext, input: Record<string, unknown>): Promise<ToolOutcome>;
}

/** What a run tool source is told about the run. */
export interface RunScope {
  projectId: number;
  workerId: number;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  /** The names of the worker's outside MCP servers as the run read its worker (read by the source when absent). */
  mcpServers?: string[];
}

/** Tools that depend on the run; `open` never throws (a source that cannot offer its tools offers none). */
export interface RunToolSource {
  name: string;
  open(run: RunScope): Promise<{ tools: AgentTool[]; close(): Promise<void> }>;
}

export interface ToolRegistry {
  /** Add a tool. @throws when the name is taken. */
  register(tool: AgentTool): void;
  /** Add (or replace, by name) a source of run-dependent tools. */
  registerSource(source: RunToolSource): void;
  /**
   * The tools of one run: `offered(workerTools, ports)` plus every source's (a name already offered is kept
   * once), and `close()` to call when the run ends.
   */
  forRun(
    workerTools: string[],
    ports: AgentPorts,
    run: RunScope,
  ): Promise<{ tools: AgentTool[]; close(): Promise<void> }>;
  get(name: string): AgentTool | undefined;
  list(): AgentTool[];
  /** The tools offered to a worker with this `tools` list under these ports (rules above). */
  offered(workerTools: string[], ports: AgentPorts): AgentTool[];
}

const ALIASES: Record<string, string[]> = {
  read: ['read_file'],
  write: ['write_file'],
  edit: ['write_file'],
  multiedit: ['write_file'],
  glob: ['list_files'],
  ls: ['list_files'],
  grep: ['search_knowledge'],
};

/** Convert tools to the LLM's shape. */
export const toLlmTools = (tools: AgentTool[]): LlmTool[] =>
  tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));

/** An empty registry; `createDefaultToolRegistry` (builtin-tools.ts) adds the built-in tools. */
export function createToolRegistry(): ToolRegistry {
  const tools = new Map<string, AgentTool>();
  const sources = new Map<string, RunToolSource>();
  const registry: ToolRegistry = {
    register(tool) {
      if (tools.has(tool.name)) throw new Error(`agent tool ${tool.name} is registered twice`);
      tools.set(tool.name, tool);
    },
    registerSource(source) {
      sources.set(source.name, source);
    },
    async forRun(workerTools, ports, run) {
      const base = registry.offered(workerTools, ports);
      const opened = await Promise.all([...sources.values()].map((s) => s.open(run)));
      const names = new Set(base.map((t) => t.name));
      const extra = opened.flatMap((o) => o.tools).filter((t) => !names.has(t.name) && names.add(t.name));
      return {
        tools: [...base, ...extra],
        close: async () => {
          await Promise.all(opened.map((o) => o.close().catch(() => {})));
        },
      };
    },
    get: (name) => tools.get(name),
    list: () => [...tools.values()],
    offered(workerTools, ports) {
      const available = [...tools.values()].filter((t) => !t.needs || ports[t.needs]);
      if (!workerTools.length) return available;
      const wanted = new Set<string>(['create_issue']);
      for (const raw of workerTools) {
        const n = String(raw).toLowerCase();
        wanted.add(n);
        for (const a of ALIASES[n] ?? []) wanted.add(a);
      }
      return available.filter((t) => wanted.has(t.name) || wanted.has(t.group));
    },
  };
  return registry;
}

/** Missing required fields of `input` under `schema` (the malformed-tool-call check). */
export function missingRequired(tool: Pick<AgentTool, 'input_schema'>, input: Record<string, unknown>): string[] {
  return (tool.input_schema.required ?? []).filter(
    (k) => input[k] === undefined || input[k] === null || input[k] === '',
  );
}

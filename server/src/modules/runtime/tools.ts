/**
 * The agent's tool registry. Every tool acts on one project only; the runtime hands it a `ToolContext`.
 * Areas plug their own tools in with `deps.agentTools.register({...})`; a tool that `needs` a port
 * (ports.ts) is offered only when the runtime was given that port.
 *
 * Which tools a worker gets: the names in its `tools` list (group names `files`, `issues`, `skills`,
 * `wiki`, `search` and the agent-CLI names Read/Write/Edit/Glob/LS/Grep are expanded); an empty list
 * means every registered tool. `create_issue` is offered to every worker, whatever its list. No shell tool
 * exists: commands may only run inside the user's container, which this runtime does not drive yet.
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

export interface ToolRegistry {
  /** Add a tool. @throws when the name is taken. */
  register(tool: AgentTool): void;
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
  return {
    register(tool) {
      if (tools.has(tool.name)) throw new Error(`agent tool ${tool.name} is registered twice`);
      tools.set(tool.name, tool);
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
}

/** Missing required fields of `input` under `schema` (the malformed-tool-call check). */
export function missingRequired(tool: Pick<AgentTool, 'input_schema'>, input: Record<string, unknown>): string[] {
  return (tool.input_schema.required ?? []).filter(
    (k) => input[k] === undefined || input[k] === null || input[k] === '',
  );
}

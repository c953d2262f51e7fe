import { describe, expect, it } from 'vitest';
import { createDefaultToolRegistry } from './builtin-tools.ts';
import type { AgentPorts, IssuesPort, SearchPort, SkillsPort, WikiPort } from './ports.ts';
import { createToolRegistry } from './tools.ts';

/** Ports that exist (their methods are never called by `offered`). */
const ALL: AgentPorts = {
  issues: {} as IssuesPort,
  skills: {} as SkillsPort,
  wiki: {} as WikiPort,
  search: {} as SearchPort,
};
const FILES = ['read_file', 'list_files', 'write_file'];
const ISSUES = ['create_issue', 'take_issue', 'update_issue', 'log_issue'];
const SKILLS = ['load_skill', 'unload_skill'];
const WIKI = ['read_wiki_page', 'save_wiki_page'];
const SEARCH = ['search_knowledge'];

const registry = createDefaultToolRegistry();
const offered = (tools: string[], ports: AgentPorts = ALL) =>
  registry
    .offered(tools, ports)
    .map((t) => t.name)
    .sort();
const sorted = (...names: string[][]) => names.flat().sort();

describe('the tools offered to a worker (runtime/tools.ts)', () => {
  it('an empty tools list offers every tool whose port is present', () => {
    expect(offered([])).toEqual(sorted(FILES, ISSUES, SKILLS, WIKI, SEARCH));
    expect(offered([], {})).toEqual(sorted(FILES));
    expect(offered([], { wiki: ALL.wiki })).toEqual(sorted(FILES, WIKI));
  });

  it('a port-backed tool whose port is absent is not offered, even when named', () => {
    expect(offered(['wiki', 'search', 'load_skill'], { issues: ALL.issues })).toEqual(['create_issue']);
    expect(offered(['issues'], {})).toEqual([]);
    expect(offered(['read_file', 'take_issue'], { skills: ALL.skills })).toEqual(['read_file']);
  });

  it('create_issue is offered to every worker when the issues port is there', () => {
    expect(offered(['read_file'])).toEqual(['create_issue', 'read_file']);
    expect(offered(['wiki'])).toEqual(sorted(['create_issue'], WIKI));
    expect(offered(['nothing-known'])).toEqual(['create_issue']);
  });

  it('group names expand to their tools', () => {
    expect(offered(['files'])).toEqual(sorted(['create_issue'], FILES));
    expect(offered(['issues'])).toEqual(sorted(ISSUES));
    expect(offered(['skills'])).toEqual(sorted(['create_issue'], SKILLS));
    expect(offered(['search'])).toEqual(sorted(['create_issue'], SEARCH));
  });

  it('agent-CLI names are aliases, case-insensitive: Read, Write, Edit, MultiEdit, Glob, LS, Grep', () => {
    expect(offered(['Read'])).toEqual(['create_issue', 'read_file']);
    for (const n of ['Write', 'Edit', 'MultiEdit']) expect(offered([n])).toEqual(['create_issue', 'write_file']);
    for (const n of ['Glob', 'LS']) expect(offered([n])).toEqual(['create_issue', 'list_files']);
    expect(offered(['Grep'])).toEqual(['create_issue', 'search_knowledge']);
    expect(offered(['Grep'], { issues: ALL.issues })).toEqual(['create_issue']);
    expect(offered(['READ_FILE', 'Files'])).toEqual(sorted(['create_issue'], FILES));
  });

  it('a registry refuses a second tool of the same name', () => {
    const reg = createToolRegistry();
    const tool = {
      name: 'x',
      description: 'x',
      group: 'g',
      input_schema: { type: 'object' as const, properties: {} },
      run: async () => ({ content: '' }),
    };
    reg.register(tool);
    expect(() => reg.register(tool)).toThrow(/registered twice/);
    expect(reg.offered([], {}).map((t) => t.name)).toEqual(['x']);
    expect(reg.offered(['g'], {}).map((t) => t.name)).toEqual(['x']);
  });
});

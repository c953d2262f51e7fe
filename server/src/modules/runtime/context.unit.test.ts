import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AUTOLOAD_SKILL_LIMIT,
  buildSystem,
  MANIFEST_LIMIT,
  SKILL_INDEX_DESCRIPTION,
  SKILL_INDEX_LIMIT,
  SKILL_INDEX_MAX,
  skillIndex,
} from './context.ts';
import type { SkillsPort } from './ports.ts';

/** An in-memory skills port: the given skills, visible to every project. */
function skillsPort(skills: Array<{ name: string; description: string; content: string }>): SkillsPort {
  return {
    list: async () => skills.map(({ name, description }) => ({ name, description })),
    get: async (_projectId, name) => {
      const s = skills.find((x) => x.name === name);
      return s ? { name: s.name, content: s.content } : null;
    },
  };
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'context-unit-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const project = (protocol = '') => ({ id: 1, display_name: 'Shop', dir, protocol });
const worker = (over: Partial<{ system_prompt: string; context_assets: string[]; focus_dirs: string[] }> = {}) => ({
  label: 'Dev',
  system_prompt: 'You build the shop.',
  context_assets: [],
  focus_dirs: [],
  ...over,
});

describe('the context a run starts with (docs/ARCHITECTURE.md, Worker runtime)', () => {
  it('prompt, rules, manifest (≤ 8000 characters), skills list, auto-loaded skills (≤ 3000 each), workspace, in that order', async () => {
    fs.writeFileSync(path.join(dir, 'MANIFEST.md'), `M${'m'.repeat(MANIFEST_LIMIT + 500)}`);
    const skills = skillsPort([
      { name: 'style', description: 'House style', content: `S${'s'.repeat(AUTOLOAD_SKILL_LIMIT + 100)}` },
      { name: 'deploy', description: 'How to deploy', content: 'Run the pipeline.' },
    ]);
    const { system, autoloaded } = await buildSystem({
      project: project('  Always log progress.  '),
      worker: worker({ context_assets: ['style', 'deploy'] }),
      skills,
      toolNames: ['read_file', 'create_issue'],
    });
    expect(autoloaded).toEqual(['style', 'deploy']);
    const parts = system.split('\n\n');
    expect(parts[0]).toBe('You build the shop.');
    expect(parts[1]).toBe('# Project rules\nAlways log progress.');
    expect(parts[2].startsWith('# Project manifest\nMmm')).toBe(true);
    expect(parts[2].length).toBe('# Project manifest\n'.length + MANIFEST_LIMIT);
    expect(parts[3]).toBe('# Skills\n- style: House style\n- deploy: How to deploy');
    expect(parts[4].startsWith('## Skill: style\nSss')).toBe(true);
    expect(parts[4].length).toBe('## Skill: style\n'.length + AUTOLOAD_SKILL_LIMIT);
    expect(parts[5]).toBe('## Skill: deploy\nRun the pipeline.');
    expect(parts[6]).toMatch(/^# Workspace\nYou act on the project Shop only\./);
    expect(parts[6]).toContain('you may touch: .');
    expect(parts[6]).toContain('Tools: read_file, create_issue.');
    expect(parts).toHaveLength(7);
  });

  it('the manifest is MANIFEST.md, else manifest.md, else README.md; none leaves the section out', async () => {
    const manifest = async () =>
      (await buildSystem({ project: project(), worker: worker(), toolNames: [] })).system
        .split('\n\n')
        .find((p) => p.startsWith('# Project manifest'));
    expect(await manifest()).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'README.md'), 'readme');
    expect(await manifest()).toBe('# Project manifest\nreadme');
    fs.writeFileSync(path.join(dir, 'manifest.md'), 'lower');
    expect(await manifest()).toBe('# Project manifest\nlower');
    fs.writeFileSync(path.join(dir, 'MANIFEST.md'), 'upper');
    expect(await manifest()).toBe('# Project manifest\nupper');
  });

  it('without a prompt the worker introduces itself; empty rules, no skills port, no tools and unknown skills leave their parts out', async () => {
    const { system, autoloaded } = await buildSystem({
      project: project('   '),
      worker: worker({ system_prompt: '  ', context_assets: ['missing'], focus_dirs: ['src', 'docs'] }),
      skills: skillsPort([]),
      toolNames: [],
    });
    expect(autoloaded).toEqual([]);
    const parts = system.split('\n\n');
    expect(parts[0]).toBe('You are Dev, an AI worker of the project Shop.');
    expect(parts).toHaveLength(2);
    expect(parts[1]).toContain('you may touch: src, docs.');
    expect(parts[1]).toContain('You have no tools in this conversation.');
    expect(parts[1]).toContain('You cannot run shell commands.');

    const noPort = await buildSystem({
      project: project(),
      worker: worker({ context_assets: ['style'] }),
      toolNames: [],
    });
    expect(noPort.autoloaded).toEqual([]);
    expect(noPort.system).not.toContain('# Skills');
  });
});

describe('the skill index is bounded', () => {
  it('lists at most 40 skills in at most 4000 characters, descriptions on one line cut to 200, and says how many were left out', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ name: `skill-${i}`, description: 'x'.repeat(5000) }));
    const index = skillIndex(many)!;
    expect(index.length).toBeLessThanOrEqual(SKILL_INDEX_LIMIT);
    const lines = index.split('\n');
    expect(lines[0]).toBe('# Skills');
    expect(lines.length - 2).toBeLessThanOrEqual(SKILL_INDEX_MAX);
    expect(lines[1]).toBe(`- skill-0: ${'x'.repeat(SKILL_INDEX_DESCRIPTION)}`);
    expect(lines.at(-1)).toBe(`- (${10_000 - (lines.length - 2)} more skills not listed)`);

    const short = Array.from({ length: 100 }, (_, i) => ({ name: `s${i}`, description: 'one\n# Injected heading' }));
    const capped = skillIndex(short)!.split('\n');
    expect(capped).toHaveLength(1 + SKILL_INDEX_MAX + 1);
    expect(capped[1]).toBe('- s0: one # Injected heading');
    expect(capped.at(-1)).toBe('- (60 more skills not listed)');
    expect(skillIndex([])).toBeNull();
  });
});

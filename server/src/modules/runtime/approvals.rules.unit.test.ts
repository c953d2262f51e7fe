import { describe, expect, it } from 'vitest';
import { classesOf, effectiveRules, refusalText, ruleFor, rulesProblem } from './approvals.rules.ts';

describe('approval rules', () => {
  it('match a tool by name or by prefix, the longest match first, always over once_per_run', () => {
    const rules = [
      { tool: 'github__*', mode: 'once_per_run' as const },
      { tool: 'github__merge*', mode: 'always' as const },
      { tool: 'create_issue', mode: 'once_per_run' as const },
    ];
    expect(ruleFor(rules, 'github__comment')?.mode).toBe('once_per_run');
    expect(ruleFor(rules, 'github__merge_pr')?.mode).toBe('always');
    expect(ruleFor(rules, 'create_issue')?.tool).toBe('create_issue');
    expect(ruleFor(rules, 'create_issue_x')).toBeNull();
    expect(ruleFor(rules, 'read_file')).toBeNull();
    expect(
      ruleFor(
        [
          { tool: 'a*', mode: 'once_per_run' },
          { tool: 'a*', mode: 'always' },
        ],
        'ab',
      )?.mode,
    ).toBe('always');
  });

  it('name classes of tools, exempt a tool with never, and ask past a spending threshold', () => {
    expect(classesOf('run_command')).toEqual(['@commands']);
    expect(classesOf('save_wiki_page')).toEqual(['@writes']);
    expect(classesOf('github__delete_repo')).toEqual(['@outbound', '@deletions']);
    expect(classesOf('read_file')).toEqual([]);
    const rules = [
      { tool: '@writes', mode: 'always' as const },
      { tool: 'log_issue', mode: 'never' as const },
      { tool: '@outbound', mode: 'once_per_run' as const },
      { tool: 'github__*', mode: 'never' as const },
      { tool: '@deletions', mode: 'always' as const },
    ];
    expect(ruleFor(rules, 'write_file')?.tool).toBe('@writes');
    expect(ruleFor(rules, 'log_issue')).toBeNull();
    // A prefix is closer than a class: github__* never exempts github__delete_repo from @deletions and @outbound.
    expect(ruleFor(rules, 'github__delete_repo')).toBeNull();
    expect(ruleFor(rules, 'jira__delete_issue')?.tool).toBe('@deletions');
    expect(ruleFor(rules, 'jira__comment')?.mode).toBe('once_per_run');
    const spend = [
      { tool: '@tokens', mode: 'once_per_run' as const, above: 100 },
      { tool: 'read_file', mode: 'never' as const },
    ];
    expect(ruleFor(spend, 'read_file', 100)).toBeNull();
    expect(ruleFor(spend, 'read_file', 101)?.tool).toBe('@tokens');
    expect(ruleFor(spend, 'list_files', 5000)?.mode).toBe('once_per_run');
    expect(rulesProblem([{ tool: '@tokens', mode: 'always' }])).toMatch(/above/);
    expect(rulesProblem([{ tool: 'x', mode: 'always', above: 3 }])).toMatch(/Only/);
    expect(rulesProblem([{ tool: '@tokens', mode: 'always', above: 3 }])).toBeNull();
  });

  it("use the worker's rules when it has any, else the project's; malformed entries are ignored", () => {
    const project = { approvals: [{ tool: 'x', mode: 'always' }, { tool: 'y', mode: 'sometimes' }, 'z'] };
    expect(effectiveRules([], project)).toEqual([{ tool: 'x', mode: 'always' }]);
    expect(effectiveRules([{ tool: 'w', mode: 'once_per_run' }], project)).toEqual([
      { tool: 'w', mode: 'once_per_run' },
    ]);
    expect(effectiveRules(null, {})).toEqual([]);
  });

  it('tell the model why a call was refused', () => {
    expect(refusalText({ status: 'denied', reason: 'not now', tool: 't' })).toContain('not now');
    expect(refusalText({ status: 'expired', reason: null, tool: 't' })).toContain('nobody approved it in time');
  });
});

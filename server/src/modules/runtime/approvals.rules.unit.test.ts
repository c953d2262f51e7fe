import { describe, expect, it } from 'vitest';
import { effectiveRules, refusalText, ruleFor } from './approvals.rules.ts';

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

  it("use the worker's rules when it has any, else the project's; malformed entries are ignored", () => {
    const project = { approvals: [{ tool: 'x', mode: 'always' }, { tool: 'y', mode: 'never' }, 'z'] };
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

import { describe, expect, it } from 'vitest';
import { entrySentence, hue, initials } from './board';

const t = (m: string, v?: Record<string, string>) => m.replace(/\{(\w+)\}/g, (_a, k: string) => v?.[k] ?? `{${k}}`);
const list = (items: string[]) => items.join(' and ');

describe('issue activity and avatars', () => {
  it('says each kind of entry as a sentence with the statuses named, not coded', () => {
    const s = (kind: string, message: string) => entrySentence({ kind, author: 'Ana', message }, t, list);
    expect(s('create', 'created: Survey')).toBe('Ana created the issue');
    expect(s('status', 'status open → in_progress')).toBe('Ana moved it from Open to In progress');
    expect(s('take', 'taken by Researcher')).toBe('Ana started it, assigned to Researcher');
    expect(s('assign', 'assigned to Writer')).toBe('Ana assigned it to Writer');
    expect(s('assign', 'unassigned')).toBe('Ana removed the assignee');
    expect(s('edit', 'edited title, priority')).toBe('Ana changed the title and the priority');
    expect(s('log', 'Asked the client')).toBe('Asked the client');
    expect(s('future', 'something new')).toBe('something new');
    expect(entrySentence({ kind: 'create', message: 'created: x' }, t, list)).toBe('Someone created the issue');
  });
  it('takes up to two initials from any script and a stable colour per name', () => {
    expect(initials('Market researcher')).toBe('MR');
    expect(initials('ann')).toBe('A');
    expect(initials('дослідник ринку і цін')).toBe('ДР');
    expect(initials('  ')).toBe('?');
    expect(initials(null)).toBe('?');
    expect(hue('Ann')).toBe(hue('Ann'));
    expect(hue('Ann')).toBeGreaterThanOrEqual(0);
  });
});

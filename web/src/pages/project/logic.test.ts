import { describe, expect, it } from 'vitest';
import { safeNext } from '../auth/Login';
import { loadSlugify } from '../projectName';
import { dropMove, STATUSES, toColumns } from '../../features/issues/board';
import { moveItem } from './reorder';
import { hitLink } from './Search';

describe('issues board', () => {
  const issues = [
    { id: 1, status: 'open' as const, priority: 'P2' },
    { id: 2, status: 'open' as const, priority: 'P0' },
    { id: 3, status: 'closed' as const, priority: 'P1' },
    { id: 4, status: 'open' as const, priority: 'P2' },
  ];
  it('has the five statuses as columns, empty ones too, highest priority then newest first', () => {
    const cols = toColumns(issues);
    expect(Object.keys(cols)).toEqual([...STATUSES]);
    expect(cols.open.map((i) => i.id)).toEqual([2, 4, 1]);
    expect(cols.closed.map((i) => i.id)).toEqual([3]);
    expect(cols.blocked).toEqual([]);
  });
  it('a drop onto another column moves the issue; onto its own column or of an unknown id, nothing', () => {
    expect(dropMove(issues, 1, 'in_progress')).toEqual({ id: 1, status: 'in_progress' });
    expect(dropMove(issues, 1, 'open')).toBeNull();
    expect(dropMove(issues, 99, 'closed')).toBeNull();
  });
});

describe('small rules', () => {
  it('moveItem moves within bounds', () => {
    expect(moveItem([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(moveItem([1, 2, 3], 2, 5)).toEqual([1, 2, 3]);
    expect(moveItem([1, 2, 3], 2, -1)).toEqual([3, 1, 2]);
  });
  it('slugify makes a technical project name', async () => {
    const slugify = await loadSlugify();
    expect(slugify('Market Study 2026!')).toBe('market-study-2026');
    expect(slugify('!!!')).toBe('');
    expect(slugify('Дослідження ринку')).toBe('doslidzhennya-rinku');
    expect(slugify("Ґанок і м'ята")).toBe('ganok-i-myata');
    expect(slugify('北京')).toBe('bei-jing');
    expect(slugify('a')).toBe('a-project');
    expect(slugify('x'.repeat(60))).toHaveLength(40);
  });
  it('safeNext keeps only same-site paths', () => {
    expect(safeNext('/projects/a')).toBe('/projects/a');
    expect(safeNext('//evil.example')).toBe('/projects');
    expect(safeNext('/\\evil.example')).toBe('/projects');
    expect(safeNext('https://evil.example')).toBe('/projects');
    expect(safeNext(null)).toBe('/projects');
  });
  it('search hits link to the tab of their kind', () => {
    expect(hitLink('p', 'issue')).toBe('/projects/p/issues');
    expect(hitLink('p', 'issue', { doc_id: '7' })).toBe('/projects/p/issues?issue=7');
    expect(hitLink('p', 'wiki')).toBe('/projects/p/wiki');
    expect(hitLink('p', 'memory')).toBe('/projects/p/search');
    expect(hitLink('p', 'wiki', { doc_id: 'ops/setup.md', location: { heading: 'Setup › Database' } })).toBe(
      '/projects/p/wiki?page=ops%2Fsetup.md&heading=Database',
    );
  });
});

describe('translation suggestions', () => {
  it('finds the message of the selected text by its translation, or by its English msgid', async () => {
    const { msgidForText } = await import('../../features/feedback/logic');
    const messages = { Save: 'Зберегти', Open: 'Відкриті' };
    expect(msgidForText(messages, ' Зберегти ')).toBe('Save');
    expect(msgidForText(messages, 'Open')).toBe('Open');
    expect(msgidForText(messages, 'unknown')).toBe('');
    expect(msgidForText(messages, 'constructor')).toBe('');
  });
});

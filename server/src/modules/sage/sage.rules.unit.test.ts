import { describe, expect, it } from 'vitest';
import { fivePoint, jsonOf, quickScan, rubricScore } from './sage.rules.ts';

const skills = [
  {
    skill_id: 'catalog:test-writing',
    name: 'test-writing',
    description: '',
    category: 'quality',
    tags: ['test', 'flaky'],
  },
  {
    skill_id: 'catalog:security-review',
    name: 'security-review',
    description: '',
    category: 'engineering',
    tags: ['xss', 'sql injection'],
  },
  { skill_id: 7, name: 'release-notes', description: '', category: 'community', tags: ['release'] },
];

describe('quickScan', () => {
  it('finds skills whose tags the project texts mention, as whole words and phrases, most matches first', () => {
    const found = quickScan(
      skills,
      [
        { label: '#1 Flaky login test', text: 'fails one run in twenty' },
        { label: '#2 Add tests for export', text: 'we need a test for CSV' },
        { label: '#3 Search box', text: 'possible SQL injection in the query' },
        { label: 'wiki: Testing guide', text: 'attestation' },
      ],
      new Set(),
    );
    expect(found.map((f) => [f.name, f.matches])).toEqual([
      ['test-writing', 2],
      ['security-review', 1],
    ]);
    expect(found[0].evidence).toEqual(['#1 Flaky login test', '#2 Add tests for export']);
    expect(found[1].reason).toContain('sql injection');
  });
  it('skips skills the project already has', () => {
    expect(quickScan(skills, [{ label: '#1 flaky test', text: '' }], new Set(['test-writing']))).toEqual([]);
  });
});

describe('model answers', () => {
  it('reads the first JSON object, fenced or bare', () => {
    expect(jsonOf('Here:\n```json\n{"a": 1}\n```')).toEqual({ a: 1 });
    expect(jsonOf('sure {"b": [1,2]} done')).toEqual({ b: [1, 2] });
    expect(jsonOf('no json here')).toBeUndefined();
    expect(jsonOf('[1,2]')).toBeUndefined();
  });
  it('scores the rubric 0–1 with clamped criteria', () => {
    expect(rubricScore({ follows_skill: 5, correctness: 4, completeness: 3, clarity: 9 })).toEqual({
      scores: { follows_skill: 5, correctness: 4, completeness: 3, clarity: 5 },
      score: 0.85,
    });
    expect(rubricScore(undefined).score).toBe(0);
    expect(rubricScore({ correctness: 'high' }).scores.correctness).toBe(0);
  });
  it('reads a 1–5 score', () => {
    expect(fivePoint(4.4)).toBe(4);
    expect(fivePoint(12)).toBe(5);
    expect(fivePoint('x')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MAX_PUBLISHED_CONTENT, MAX_PUBLISHED_PER_USER, publishRefusal, skillFile } from './skills.rules.ts';

describe('SKILL.md', () => {
  it('has YAML front matter that reads back as the name and description, whatever the description holds', () => {
    for (const description of ['How we test: "real"', 'line one\nline two', '- a list? no', '---', "it's #1", '']) {
      const file = skillFile({ name: 'testing', description, content: 'Write tests first.' });
      const m = /^---\n([\s\S]*?)---\n\n([\s\S]*)$/.exec(file);
      expect(m, description).not.toBeNull();
      expect(parse(m![1]), description).toEqual({ name: 'testing', description });
      expect(m![2]).toBe('Write tests first.\n');
    }
  });
});

describe('publishing global skills is bounded', () => {
  it('refuses content over the limit and a user past the number of published skills; admins publish any number', () => {
    const ok = { published: 0, contentLength: 10, isAdmin: false };
    expect(publishRefusal(ok)).toBeNull();
    expect(publishRefusal({ ...ok, contentLength: MAX_PUBLISHED_CONTENT })).toBeNull();
    expect(publishRefusal({ ...ok, contentLength: MAX_PUBLISHED_CONTENT + 1 })).toBe('skill_too_large');
    expect(publishRefusal({ ...ok, published: MAX_PUBLISHED_PER_USER - 1 })).toBeNull();
    expect(publishRefusal({ ...ok, published: MAX_PUBLISHED_PER_USER })).toBe('publish_limit');
    expect(publishRefusal({ ...ok, published: MAX_PUBLISHED_PER_USER, isAdmin: true })).toBeNull();
    expect(publishRefusal({ published: 0, contentLength: MAX_PUBLISHED_CONTENT + 1, isAdmin: true })).toBe(
      'skill_too_large',
    );
  });
});

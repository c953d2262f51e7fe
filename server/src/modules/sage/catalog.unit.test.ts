import { describe, expect, it } from 'vitest';
import { DEFAULT_CATALOG_DIR, loadCatalog, parseCatalogSkill } from './catalog.ts';

describe('catalog skills', () => {
  it('reads name, description, category, tags and tasks from the front matter', () => {
    const s = parseCatalogSkill(
      '---\nname: code-review\ndescription: Review changes.\ncategory: engineering\ntags: [Review, diff]\ntasks:\n  - Review this.\n---\n# Code review\n\nBody.',
    );
    expect(s).toEqual({
      id: 'catalog:code-review',
      name: 'code-review',
      description: 'Review changes.',
      category: 'engineering',
      tags: ['review', 'diff'],
      tasks: ['Review this.'],
      content: '# Code review\n\nBody.',
    });
  });
  it('refuses files without front matter, with bad YAML, a bad name or no body', () => {
    expect(parseCatalogSkill('# just text')).toEqual({ error: 'no front matter' });
    expect(parseCatalogSkill('---\nname: [unclosed\n---\nbody')).toEqual({ error: 'front matter is not valid YAML' });
    expect(parseCatalogSkill('---\nname: ../etc\ndescription: x\ncategory: a\n---\nbody')).toEqual({
      error: 'name must be a slug',
    });
    expect(parseCatalogSkill('---\nname: a\ndescription: x\ncategory: a\n---\n')).toEqual({
      error: 'the skill has no body',
    });
  });
  it('refuses a YAML alias bomb', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 12 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ),
      'name: x',
    ].join('\n');
    expect(parseCatalogSkill(`---\n${bomb}\n---\nbody`)).toEqual({ error: 'front matter is not valid YAML' });
  });
  it('the shipped catalog loads whole', () => {
    const c = loadCatalog(DEFAULT_CATALOG_DIR);
    expect(c.skills.length).toBeGreaterThanOrEqual(8);
    for (const s of c.skills) {
      expect(s.tasks.length).toBeGreaterThan(0);
      expect(s.tags.length).toBeGreaterThan(0);
    }
  });
});

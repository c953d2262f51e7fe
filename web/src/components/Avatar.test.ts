import { describe, expect, it } from 'vitest';
import { hue, initials } from './Avatar';

describe('generated avatar', () => {
  it('takes the first letters of the first two words, in any script', () => {
    expect(initials('Data analyst')).toBe('DA');
    expect(initials('researcher')).toBe('R');
    expect(initials('аналітик ринку')).toBe('АР');
    expect(initials('  ')).toBe('?');
  });
  it('gives the same name the same hue, and different names (mostly) different ones', () => {
    expect(hue('Researcher')).toBe(hue('Researcher'));
    expect(hue('Researcher')).not.toBe(hue('Data analyst'));
    expect(hue('x')).toBeGreaterThanOrEqual(0);
    expect(hue('x')).toBeLessThan(360);
  });
});

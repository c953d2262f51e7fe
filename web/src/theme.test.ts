import { afterEach, describe, expect, it } from 'vitest';
import { applyTheme, setTheme, storedTheme, subscribeTheme, THEME_KEY } from './theme';

afterEach(() => {
  localStorage.clear();
  delete document.documentElement.dataset.theme;
});

describe('colour theme', () => {
  it('reads the stored choice, and system for none or an unknown value', () => {
    expect(storedTheme()).toBe('system');
    localStorage.setItem(THEME_KEY, 'dark');
    expect(storedTheme()).toBe('dark');
    localStorage.setItem(THEME_KEY, 'purple');
    expect(storedTheme()).toBe('system');
  });

  it('stores a choice, puts it on the root element and tells the listeners; system removes both', () => {
    let heard = 0;
    const off = subscribeTheme(() => heard++);
    setTheme('dark');
    expect(localStorage.getItem(THEME_KEY)).toBe('dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
    setTheme('light');
    expect(document.documentElement.dataset.theme).toBe('light');
    setTheme('system');
    expect(localStorage.getItem(THEME_KEY)).toBeNull();
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(heard).toBe(3);
    off();
    setTheme('dark');
    expect(heard).toBe(3);
  });

  it('applies a choice to any element', () => {
    const el = document.createElement('div');
    applyTheme('dark', el);
    expect(el.dataset.theme).toBe('dark');
    applyTheme('system', el);
    expect(el.dataset.theme).toBeUndefined();
  });
});

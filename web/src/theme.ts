/**
 * The colour theme: the user's choice (`system`, `light` or `dark`), kept in localStorage under `crm.theme`, shown on
 * `<html data-theme="light|dark">` (no attribute for `system`: the stylesheet then follows `prefers-color-scheme`).
 * main.tsx imports this module first, so a stored choice is on the root element before React renders; no inline
 * script is needed (the service's CSP allows none).
 */
export type ThemeChoice = 'system' | 'light' | 'dark';

export const THEME_KEY = 'crm.theme';
const CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark'];
const listeners = new Set<() => void>();

/** The stored choice; `system` when none is stored, the value is unknown, or storage is unavailable. */
export function storedTheme(): ThemeChoice {
  try {
    const v = localStorage.getItem(THEME_KEY);
    return CHOICES.includes(v as ThemeChoice) ? (v as ThemeChoice) : 'system';
  } catch {
    return 'system';
  }
}

/** Puts `choice` on the root element (`data-theme`, removed for `system`). */
export function applyTheme(choice: ThemeChoice, root: HTMLElement = document.documentElement): void {
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
}

/** Stores `choice`, applies it and tells the listeners (the settings page). */
export function setTheme(choice: ThemeChoice): void {
  try {
    if (choice === 'system') localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Storage unavailable (private mode): the choice lasts for this page only.
  }
  applyTheme(choice);
  listeners.forEach((l) => l());
}

/** Calls `listener` whenever the choice changes (in this tab or another); returns the unsubscribe function. */
export function subscribeTheme(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

if (typeof window !== 'undefined') {
  applyTheme(storedTheme());
  // A choice made in another tab applies here too.
  window.addEventListener('storage', (e) => {
    if (e.key !== THEME_KEY && e.key !== null) return;
    applyTheme(storedTheme());
    listeners.forEach((l) => l());
  });
}

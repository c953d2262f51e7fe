/**
 * The signed-in user's token, kept in localStorage so a reload stays signed in; listeners hear sign-in and
 * sign-out (the auth context re-renders on them).
 */
const KEY = 'crm.token';
const listeners = new Set<() => void>();

export const session = {
  token(): string | null {
    try {
      return localStorage.getItem(KEY);
    } catch {
      return null;
    }
  },
  signIn(token: string) {
    localStorage.setItem(KEY, token);
    listeners.forEach((l) => l());
  },
  signOut() {
    if (localStorage.getItem(KEY) === null) return;
    localStorage.removeItem(KEY);
    listeners.forEach((l) => l());
  },
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/** The signed-in user: `useMe()` reads `GET /api/auth/me` (cached), `RequireAuth` sends guests to sign in. */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useSyncExternalStore, type ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { meQuery } from './features/auth/api';
import { session } from './session';

export function useToken(): string | null {
  return useSyncExternalStore(session.subscribe, session.token, () => null);
}

export function useMe() {
  const token = useToken();
  return useQuery(meQuery(token));
}

/**
 * Clears cached data when the user signs out: when the token goes from one value to none (or to another user's),
 * never on a guest's first render, where clearing would cancel the queries a page just started (the sign-in
 * options of the register page among them) and leave them empty.
 */
export function useResetOnSignOut() {
  const token = useToken();
  const qc = useQueryClient();
  const previous = useRef(token);
  useEffect(() => {
    if (previous.current && previous.current !== token) qc.clear();
    previous.current = token;
  }, [token, qc]);
}

export function RequireAuth({ children, admin }: { children: ReactNode; admin?: boolean }) {
  const token = useToken();
  const me = useMe();
  const loc = useLocation();
  if (!token) return <Navigate to={`/login?next=${encodeURIComponent(loc.pathname + loc.search)}`} replace />;
  if (admin && me.data && me.data.role !== 'admin') return <Navigate to="/projects" replace />;
  return <>{children}</>;
}

/**
 * The page paths (the service answers each with the app, see the web UI routes) and their components, each
 * page its own chunk loaded on first visit.
 */
import type { ComponentType } from 'react';
import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { RequireAuth } from './auth';
import { Layout } from './layout';

type Loader = () => Promise<{ default: ComponentType }>;
const page = (load: Loader) => ({ lazy: async () => ({ Component: (await load()).default }) });
const authed = (load: Loader, admin = false): RouteObject => ({
  lazy: async () => {
    const C = (await load()).default;
    return {
      Component: () => (
        <RequireAuth admin={admin}>
          <C />
        </RequireAuth>
      ),
    };
  },
});

export const routes: RouteObject[] = [
  {
    element: <Layout />,
    children: [
      { path: '/', element: <Navigate to="/projects" replace /> },
      { path: '/login', ...page(() => import('./pages/auth/Login')) },
      { path: '/login/callback', ...page(() => import('./pages/auth/LoginCallback')) },
      { path: '/register', ...page(() => import('./pages/auth/Register')) },
      { path: '/verify-email', ...page(() => import('./pages/auth/VerifyEmail')) },
      { path: '/forgot-password', ...page(() => import('./pages/auth/ForgotPassword')) },
      { path: '/reset-password', ...page(() => import('./pages/auth/ResetPassword')) },
      { path: '/waitlist', ...page(() => import('./pages/auth/Waitlist')) },
      { path: '/onboarding', ...authed(() => import('./pages/Onboarding')) },
      { path: '/setup', ...authed(() => import('./pages/Setup')) },
      { path: '/projects', ...authed(() => import('./pages/Projects')) },
      { path: '/projects/:name/:tab?', ...authed(() => import('./pages/project/Project')) },
      { path: '/projects/:name/:tab/:sub', ...authed(() => import('./pages/project/Project')) },
      { path: '/account', ...authed(() => import('./pages/Account')) },
      { path: '/admin', ...authed(() => import('./pages/Admin'), true) },
      { path: '/help', ...authed(() => import('./pages/Help')) },
      { path: '/cli/link', ...authed(() => import('./pages/CliLink')) },
      { path: '*', ...page(() => import('./pages/NotFound')) },
    ],
  },
];

export const router = createBrowserRouter(routes);

/**
 * Signing in and the account's identity: the signed-in user, the identity provider's sign-in button, and the
 * calls of the sign-in pages (register, log in, verify, reset, waitlist). Query keys from `authKeys`.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';

/** Query keys of the signed-in user and sign-in settings. */
export const authKeys = {
  me: () => ['auth', 'me'] as const,
  meFor: (token: string | null) => [...authKeys.me(), token] as const,
  oidcConfig: () => ['auth', 'oidc-config'] as const,
};

/** The user signed in with `token` (cached a minute; off without a token). */
export const meQuery = (token: string | null) =>
  queryOptions({
    queryKey: authKeys.meFor(token),
    queryFn: () => must(api.GET('/api/auth/me')),
    enabled: !!token,
    staleTime: 60_000,
  });

/** Whether sign-in with the identity provider is on, and its name (cached a minute). */
export const oidcConfigQuery = () =>
  queryOptions({
    queryKey: authKeys.oidcConfig(),
    queryFn: () => must(api.GET('/api/auth/oidc/config')),
    staleTime: 60_000,
  });

/** Sign in with e-mail and password; resolves with the session token. */
export const login = (body: JsonBody<'/api/auth/login', 'post'>) => must(api.POST('/api/auth/login', { body }));

/** Register (with an invite code where the service asks for one); resolves with the session token. */
export const register = (body: JsonBody<'/api/auth/register', 'post'>) =>
  must(api.POST('/api/auth/register', { body }));

/** Ask for the password-reset e-mail. */
export const forgotPassword = (email: string) => must(api.POST('/api/auth/forgot-password', { body: { email } }));

/** Set a new password with the e-mailed token. */
export const resetPassword = (body: JsonBody<'/api/auth/reset-password', 'post'>) =>
  must(api.POST('/api/auth/reset-password', { body }));

/** Join the waitlist. */
export const joinWaitlist = (body: JsonBody<'/api/auth/waitlist', 'post'>) =>
  must(api.POST('/api/auth/waitlist', { body }));

/** Confirm the e-mail address with the link's token; the signed-in user is read again whatever the answer. */
export function useVerifyEmail() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (token: string) => must(api.POST('/api/auth/verify-email', { body: { token } })),
    onSettled: () => qc.invalidateQueries({ queryKey: authKeys.me() }),
  });
}

/** Change the password; resolves with the new session token. */
export const changePassword = (body: JsonBody<'/api/auth/change-password', 'post'>) =>
  must(api.POST('/api/auth/change-password', { body }));

/** Erase the account; `confirm` must be the exact erasure text. */
export const eraseAccount = (confirm: string) => must(api.DELETE('/api/auth/account', { body: { confirm } }));

import { useQuery } from '@tanstack/react-query';
import { oidcConfigQuery } from '../../features/auth/api';
import { useI18n } from '../../i18n';

/**
 * "Sign in with {name}" when the service offers the identity provider: a plain link to the flow's start (the
 * browser leaves for the provider and comes back to /login/callback). `inviteCode` is passed on for a new account;
 * `redirect` is the page to open afterwards.
 */
export function IdpButton({
  inviteCode,
  redirect,
  register,
}: {
  inviteCode?: string;
  redirect?: string;
  register?: boolean;
}) {
  const { t } = useI18n();
  const config = useQuery(oidcConfigQuery());
  if (!config.data?.enabled) return null;
  const q = new URLSearchParams();
  if (inviteCode?.trim()) q.set('invite_code', inviteCode.trim());
  if (redirect) q.set('redirect', redirect);
  const name = config.data.name;
  return (
    <p>
      <a className="button" href={`/api/auth/oidc/start${q.size ? `?${q}` : ''}`}>
        {register ? t('Register with {name}', { name }) : t('Sign in with {name}', { name })}
      </a>
    </p>
  );
}

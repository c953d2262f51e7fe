import { useMutation, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import {
  codehostQuery,
  connectCodehost,
  linkOidc,
  oidcQuery,
  useDisconnectCodehost,
  useUnlinkOidc,
} from '../../features/account/api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

/**
 * The settings' sign-in and code host section: link or unlink the identity provider, connect or disconnect the code
 * host. Linking and connecting leave for the provider, which sends the browser back to
 * `/account?oidc=linked|oidc_error=…` or `?codehost=connected|codehost_error=…`.
 */
export function Connections() {
  const { t } = useI18n();
  const [params] = useSearchParams();
  const oidc = useQuery(oidcQuery());
  const codehost = useQuery(codehostQuery());
  const go = (url: string) => window.location.assign(url);
  const link = useMutation({ mutationFn: linkOidc, onSuccess: (r) => go(r.authorize_url) });
  const unlink = useUnlinkOidc();
  const connect = useMutation({ mutationFn: connectCodehost, onSuccess: (r) => go(r.authorize_url) });
  const disconnect = useDisconnectCodehost();
  const back = params.get('oidc_error') ?? params.get('codehost_error');
  if (!oidc.data?.configured && !codehost.data?.configured) return null;
  return (
    <div>
      <h2>{t('Sign-in and code host')}</h2>
      {params.get('oidc') === 'linked' && (
        <p role="status" className="ok">
          {t('The identity provider is linked.')}
        </p>
      )}
      {params.get('codehost') === 'connected' && (
        <p role="status" className="ok">
          {t('The code host is connected.')}
        </p>
      )}
      {back && (
        <p role="alert" className="error">
          {t('That did not succeed ({code}). Please try again.', { code: back })}
        </p>
      )}
      {oidc.data?.configured && (
        <p>
          {oidc.data.linked
            ? t('Linked to {name} ({email}).', { name: oidc.data.name, email: oidc.data.identities[0]?.email ?? '' })
            : t('Not linked to {name}.', { name: oidc.data.name })}{' '}
          {oidc.data.linked ? (
            <>
              <button type="button" onClick={() => unlink.mutate()} disabled={!oidc.data.has_password}>
                {t('Unlink')}
              </button>
              {!oidc.data.has_password && (
                <small className="hint">
                  {' '}
                  {t('It is your only way in: set a password (password reset) before unlinking it.')}
                </small>
              )}
            </>
          ) : (
            <button type="button" onClick={() => link.mutate()}>
              {t('Link {name}', { name: oidc.data.name })}
            </button>
          )}
        </p>
      )}
      {codehost.data?.configured && (
        <p>
          {codehost.data.connected
            ? t('Code host connected as {login}.', { login: codehost.data.login ?? '' })
            : t('Connect the code host to clone your private repositories.')}{' '}
          {codehost.data.connected ? (
            <button type="button" onClick={() => disconnect.mutate()}>
              {t('Disconnect')}
            </button>
          ) : (
            <button type="button" onClick={() => connect.mutate()}>
              {t('Connect the code host')}
            </button>
          )}
        </p>
      )}
      <ErrorLine error={link.error ?? unlink.error ?? connect.error ?? disconnect.error} />
    </div>
  );
}

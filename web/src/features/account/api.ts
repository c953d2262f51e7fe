/**
 * The signed-in user's account: settings (own LLM key, transcript uploads), usage and trial, access tokens,
 * linked identity provider and code host, CLI devices and install commands. Query keys from `accountKeys`.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of the account. */
export const accountKeys = {
  all: ['account'] as const,
  settings: () => [...accountKeys.all, 'settings'] as const,
  usage: () => [...accountKeys.all, 'usage'] as const,
  trial: () => [...accountKeys.all, 'trial'] as const,
  tokens: () => [...accountKeys.all, 'tokens'] as const,
  oidc: () => [...accountKeys.all, 'oidc'] as const,
  codehost: () => [...accountKeys.all, 'codehost'] as const,
  cliStatus: () => [...accountKeys.all, 'cli', 'status'] as const,
  cliDevices: () => [...accountKeys.all, 'cli', 'devices'] as const,
  cliInstall: (platform: string | null) => [...accountKeys.all, 'cli', 'install', platform] as const,
};

/** The account's settings. */
export const settingsQuery = () =>
  queryOptions({ queryKey: accountKeys.settings(), queryFn: () => must(api.GET('/api/crm/account/settings')) });

/** Token usage: totals and the latest calls. */
export const usageQuery = () =>
  queryOptions({ queryKey: accountKeys.usage(), queryFn: () => must(api.GET('/api/crm/account/usage')) });

/** The trial's state (tokens granted and left). */
export const trialQuery = () =>
  queryOptions({ queryKey: accountKeys.trial(), queryFn: () => must(api.GET('/api/crm/account/trial-status')) });

/** The user's access tokens and device credentials. */
export const tokensQuery = () =>
  queryOptions({ queryKey: accountKeys.tokens(), queryFn: () => must(api.GET('/api/crm/account/tokens')) });

/** Whether the identity provider is configured and linked. */
export const oidcQuery = () =>
  queryOptions({ queryKey: accountKeys.oidc(), queryFn: () => must(api.GET('/api/crm/account/oidc')) });

/** Whether the code host is configured and connected. */
export const codehostQuery = () =>
  queryOptions({ queryKey: accountKeys.codehost(), queryFn: () => must(api.GET('/api/crm/account/codehost')) });

/** Whether the user uses the CLI (a login or check-in in the last 30 days). */
export const cliStatusQuery = () =>
  queryOptions({ queryKey: accountKeys.cliStatus(), queryFn: () => must(api.GET('/api/crm/onboarding/cli-status')) });

/** The devices whose CLI checked in. */
export const cliDevicesQuery = () =>
  queryOptions({ queryKey: accountKeys.cliDevices(), queryFn: () => must(api.GET('/api/crm/cli/devices')) });

/** How to install the CLI on a platform (off until one is chosen); records no download (`GET /api/cli/install`). */
export const cliInstallQuery = (platform: 'linux' | 'macos' | 'windows' | null) =>
  queryOptions({
    queryKey: accountKeys.cliInstall(platform),
    queryFn: () => must(api.GET('/api/cli/install/{platform}', { params: { path: { platform: platform! } } })),
    enabled: !!platform,
  });

/**
 * Count a download of the CLI for `platform` (`GET /api/cli/download/:platform` records `cli_download`): called by
 * the download link as the browser fetches the package. Best effort: a failure is not the user's concern.
 */
export const recordCliDownload = (platform: 'linux' | 'macos' | 'windows') =>
  api.GET('/api/cli/download/{platform}', { params: { path: { platform } } }).then(
    () => undefined,
    () => undefined,
  );

type SettingsBody = JsonBody<'/api/crm/account/settings', 'put'>;

/** Save settings; the answer replaces the cached settings. */
export function useSaveSettings(after?: After<unknown, SettingsBody>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: SettingsBody) => must(api.PUT('/api/crm/account/settings', { body })),
    onSuccess: (data, body) => {
      after?.onSuccess?.(data, body);
      qc.setQueryData(accountKeys.settings(), data);
    },
  });
}

type TokenBody = JsonBody<'/api/crm/account/tokens', 'post'>;
const createToken = (body: TokenBody) => must(api.POST('/api/crm/account/tokens', { body }));

/** Create an access token (its secret is in the answer only); refreshes the token list. */
export function useCreateToken(after?: After<Awaited<ReturnType<typeof createToken>>, TokenBody>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createToken,
    onSuccess: (data, body) => {
      after?.onSuccess?.(data, body);
      void qc.invalidateQueries({ queryKey: accountKeys.tokens() });
    },
  });
}

/** Revoke an access token; refreshes the list. */
export function useRevokeToken() {
  return useInvalidatingMutation(
    (id: number) => must(api.DELETE('/api/crm/account/tokens/{id}', { params: { path: { id } } })),
    () => [accountKeys.tokens()],
  );
}

/** Remove a CLI device (revokes its credential: the CLI there is logged out at its next call). */
export function useRevokeDevice() {
  return useInvalidatingMutation(
    (device_id: string) => must(api.DELETE('/api/crm/cli/devices/{device_id}', { params: { path: { device_id } } })),
    () => [accountKeys.cliDevices()],
  );
}

/** Start linking the identity provider; resolves with the address to send the browser to. */
export const linkOidc = () => must(api.POST('/api/crm/account/oidc/link'));

/** Start connecting the code host; resolves with the address to send the browser to. */
export const connectCodehost = () => must(api.POST('/api/crm/account/codehost/connect'));

/** Unlink the identity provider; refreshes its state. */
export function useUnlinkOidc() {
  return useInvalidatingMutation(
    () => must(api.DELETE('/api/crm/account/oidc')),
    () => [accountKeys.oidc()],
  );
}

/** Disconnect the code host; refreshes its state. */
export function useDisconnectCodehost() {
  return useInvalidatingMutation(
    () => must(api.DELETE('/api/crm/account/codehost')),
    () => [accountKeys.codehost()],
  );
}

/** Confirm a CLI device link code as the signed-in user. */
export const confirmCliLink = (code: string) => must(api.POST('/api/crm/cli/link/confirm', { body: { code } }));

/**
 * Signing in with the identity provider (docs/api.md, Signing in with the identity provider): OpenID Connect,
 * authorization code with PKCE (S256), state and nonce, through `openid-client`. Any OpenID provider works: its
 * issuer (`IDP_ISSUER_URL`) is read by discovery; the client is `IDP_CLIENT_ID` / `IDP_CLIENT_SECRET` from the
 * secret store, read on every start and callback (a rotation is used by the next sign-in on every instance).
 *
 * The callback signs in the account linked to the provider's identity (issuer + subject); else the account whose
 * verified e-mail is the provider's verified e-mail (and links it); else registers a new account, which needs a
 * valid invite code like every sign-up (and the per-address signup limit). The provider's verified e-mail counts as
 * verified; an unverified one gets the verification e-mail. A signed-in user links the provider in their settings and
 * may unlink it while the account keeps another way to sign in (a password).
 *
 * The flow's state, nonce, PKCE verifier, invite code and the client's fingerprint travel in a sealed cookie
 * (lib/oauth-flow.ts); a callback whose client was rotated since its start is refused with 400 `oidc_flow_stale`,
 * and the user simply starts again.
 */
import type * as client from 'openid-client';
import { AppError, BadRequest, Conflict, Upstream } from '../../http/errors.ts';
import type { Actor } from '../../http/auth.ts';
import type { Logger } from '../../lib/logger.ts';
import { clientFingerprint, type FlowCookies, safeRedirectPath } from '../../lib/oauth-flow.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import { normalizeEmail } from './accounts.rules.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type { AccountsService, RequestMeta } from './accounts.service.ts';

/**
 * openid-client, imported at the first sign-in through the provider (most services configure none; loaded at
 * start it cost ~5 MiB of every start: bench/README.md, "Start-up").
 */
let openidLoaded: Promise<typeof import('openid-client')> | undefined;
const openid = () => (openidLoaded ??= import('openid-client'));

/** The callback's path; its full address (`oidcRedirectUri`) is registered at the provider. */
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';
/** The flow cookie and the path it is sent back to (the start and callback routes). */
const COOKIE = 'crm_oidc_flow';
const COOKIE_PATH = '/api/auth/oidc';
/** How long a discovered provider configuration is reused, in ms. */
const DISCOVERY_TTL_MS = 10 * 60_000;
/** Time limit of each call to the provider, in seconds. */
const IDP_TIMEOUT_S = 10;

/** The sign-in callback address of a service served at `appUrl`. */
export const oidcRedirectUri = (appUrl: string): string => `${appUrl}${OIDC_CALLBACK_PATH}`;

/** What a flow keeps between its start and its callback (sealed in the flow cookie). */
interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  /** The client fingerprint at the start. */
  fp: string;
  invite?: string;
  redirect?: string;
  /** Set when a signed-in user links the provider to their account. */
  link?: number;
}

export interface OidcDeps {
  repo: AccountsRepo;
  accounts: Pick<AccountsService, 'signInAs' | 'registerExternal'>;
  secrets: Pick<SecretStore, 'get'>;
  flows: FlowCookies;
  /** `IDP_ISSUER_URL`, and the name shown on the sign-in button (`IDP_NAME`). */
  issuer: string;
  name: string;
  appUrl: string;
  /** Told after an account's e-mail became verified through the provider. */
  userChanged: (id: number) => Promise<void>;
  log: Logger;
}

/** Where the callback sends the browser, and the error when the flow failed (the route may answer it instead). */
export interface CallbackOutcome {
  location: string;
  error?: AppError;
  /** `Set-Cookie` deleting the flow cookie. */
  clearCookie: string;
}

const inUse = () => new Conflict('identity_in_use', 'This identity already signs in to another account.');
const unavailable = () =>
  new Upstream(503, 'idp_unavailable', 'Signing in with the identity provider is not available right now.');

export function createOidcService(deps: OidcDeps) {
  const { repo, secrets, flows, appUrl, log } = deps;
  const redirectUri = oidcRedirectUri(appUrl);
  const cache = new Map<string, { config: Promise<client.Configuration>; at: number }>();

  /** The client as configured now, or undefined when its id or secret is not set. */
  async function currentClient(): Promise<{ id: string; secret: string; fp: string } | undefined> {
    const [id, secret] = await Promise.all([secrets.get('IDP_CLIENT_ID'), secrets.get('IDP_CLIENT_SECRET')]);
    if (!id || !secret) return undefined;
    return { id, secret, fp: clientFingerprint(deps.issuer, id, secret) };
  }

  /** The provider's configuration by discovery, kept 10 minutes per client. @throws 503 `idp_unavailable`. */
  async function configuration(c: { id: string; secret: string; fp: string }): Promise<client.Configuration> {
    const hit = cache.get(c.fp);
    if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
    const config = (async () => {
      const client = await openid();
      const issuer = new URL(deps.issuer);
      // Discovery first, to choose the client authentication the provider supports (the standard's default is
      // HTTP Basic; `client_secret_post` only when Basic is not offered).
      const probe = await client.discovery(issuer, c.id, undefined, client.None(), {
        timeout: IDP_TIMEOUT_S,
        // The operator's own provider may be served over http (a trusted, configured address).
        execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
      });
      const methods = probe.serverMetadata().token_endpoint_auth_methods_supported;
      const auth =
        !methods || methods.includes('client_secret_basic')
          ? client.ClientSecretBasic(c.secret)
          : client.ClientSecretPost(c.secret);
      const configured = new client.Configuration(probe.serverMetadata(), c.id, c.secret, auth);
      if (issuer.protocol === 'http:') client.allowInsecureRequests(configured);
      configured.timeout = IDP_TIMEOUT_S;
      return configured;
    })();
    cache.set(c.fp, { config, at: Date.now() });
    config.catch(() => cache.delete(c.fp));
    try {
      return await config;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'identity provider discovery failed');
      throw unavailable();
    }
  }

  /** Build the provider's authorization address for a new flow. @returns it and the flow cookie. */
  async function begin(extra: Omit<Flow, 'state' | 'nonce' | 'verifier' | 'fp'>) {
    const c = await currentClient();
    if (!c) throw unavailable();
    const config = await configuration(c);
    const client = await openid();
    const flow: Flow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      fp: c.fp,
      ...extra,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, cookie: flows.issue(COOKIE, COOKIE_PATH, flow) };
  }

  /** The provider's answer for a flow: its identity and e-mail. @throws AppError (400/503) */
  async function exchange(flow: Flow, callbackQuery: string) {
    const c = await currentClient();
    if (!c) throw unavailable();
    const client = await openid();
    if (c.fp !== flow.fp)
      throw new BadRequest(
        'oidc_flow_stale',
        'The sign-in settings changed while you were signing in; please start again.',
      );
    const params = new URLSearchParams(callbackQuery);
    if (params.get('state') !== flow.state)
      throw new BadRequest('invalid_state', 'This sign-in answer does not belong to the sign-in you started.');
    const providerError = params.get('error');
    if (providerError)
      throw new BadRequest('idp_refused', 'The identity provider did not sign you in.', {
        reason: providerError.replace(/[^a-z_]/gi, '').slice(0, 40),
      });
    const config = await configuration(c);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, new URL(`${redirectUri}?${params}`), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'identity provider code exchange failed');
      if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError)
        throw new BadRequest(
          'oidc_exchange_failed',
          'The identity provider did not accept this sign-in; please start again.',
        );
      if (err instanceof client.ClientError)
        throw new BadRequest('invalid_id_token', 'The identity provider’s answer could not be verified.');
      throw unavailable();
    }
    const idClaims = tokens.claims()!;
    let claims: Record<string, unknown> = { ...idClaims };
    if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
      try {
        claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...idClaims };
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'identity provider userinfo failed');
        throw unavailable();
      }
    }
    const email = typeof claims.email === 'string' ? normalizeEmail(claims.email) : undefined;
    if (!email || !email.includes('@'))
      throw new BadRequest('idp_email_missing', 'The identity provider did not share an e-mail address.');
    return {
      issuer: config.serverMetadata().issuer,
      subject: idClaims.sub,
      email,
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      name: typeof claims.name === 'string' ? claims.name.slice(0, 200) : undefined,
    };
  }

  /** Sign in (or register) with the provider's identity. @returns the session token. */
  async function signIn(flow: Flow, id: Awaited<ReturnType<typeof exchange>>, meta: RequestMeta) {
    const linked = await repo.identityUser(id.issuer, id.subject);
    if (linked !== undefined) {
      const user = await repo.userById(linked);
      if (user && !user.email_verified && id.emailVerified && user.email === id.email) {
        await repo.transaction((tx) => repo.markEmailVerified(tx, user.id));
        await deps.userChanged(user.id);
      }
      const r = await deps.accounts.signInAs(linked, 'login_idp', meta);
      if (r) return r.token;
    }
    const existing = await repo.userByEmail(id.email);
    if (existing) {
      if (!id.emailVerified || !existing.email_verified)
        throw new Conflict(
          'account_not_linked',
          'An account with this e-mail exists: sign in with its password and link the identity provider in your settings.',
        );
      if (
        !(await repo.insertIdentity({ userId: existing.id, issuer: id.issuer, subject: id.subject, email: id.email }))
      )
        throw inUse();
      const r = await deps.accounts.signInAs(existing.id, 'login_idp', meta);
      if (r) return r.token;
    }
    const r = await deps.accounts.registerExternal(
      {
        email: id.email,
        name: id.name,
        emailVerified: id.emailVerified,
        inviteCode: flow.invite,
        identity: { issuer: id.issuer, subject: id.subject },
      },
      meta,
    );
    return r.token;
  }

  return {
    /** `GET /api/auth/oidc/config` → `{enabled, name}`: whether the sign-in page offers "Sign in with {name}". */
    async publicConfig() {
      return { enabled: !!(await currentClient()), name: deps.name };
    },

    /**
     * `GET /api/auth/oidc/start?invite_code=&redirect=` → where to send the browser (the provider) and the flow
     * cookie. `redirect` (a same-site path) is where the web UI goes after signing in; `invite_code` is used only if
     * the sign-in makes a new account. @throws 503 `idp_unavailable` (not configured, or discovery failed)
     */
    async start(q: { invite_code?: string; redirect?: string }) {
      const invite = q.invite_code?.trim() || undefined;
      return begin({ invite: invite?.slice(0, 64), redirect: safeRedirectPath(q.redirect) });
    },

    /** Where a browser goes when the start failed with `code`: the web UI's callback page shows it. */
    startFailedLocation: (code: string) => `${appUrl}/login/callback#error=${code}`,

    /**
     * `POST /api/crm/account/oidc/link` → `{authorize_url}` and the flow cookie: the browser goes there, and the
     * callback links the identity to the caller's account. @throws 503 `idp_unavailable`
     */
    async startLink(actor: Actor) {
      const { url, cookie } = await begin({ link: actor.id });
      return { authorize_url: url, cookie };
    },

    /**
     * `GET /api/auth/oidc/callback`: check the flow (cookie, state, client unchanged), exchange the code (PKCE; the
     * ID token's nonce checked), then sign in, register or link. Never throws for a flow's failure:
     * @returns the address to send the browser to — `{app_url}/login/callback#token=…[&redirect=…]` or `#error=<code>`
     *   for a sign-in, `{app_url}/account?oidc=linked` or `?oidc_error=<code>` for a link — and the error, if any
     */
    async callback(query: string, cookieHeader: string | undefined, meta: RequestMeta): Promise<CallbackOutcome> {
      const flow = flows.read<Flow>(cookieHeader, COOKIE);
      const clearCookie = flows.clear(COOKIE, COOKIE_PATH);
      const fail = (error: AppError): CallbackOutcome => ({
        location:
          flow?.link !== undefined
            ? `${appUrl}/account?oidc_error=${error.code}`
            : `${appUrl}/login/callback#error=${error.code}`,
        error,
        clearCookie,
      });
      try {
        if (!flow)
          throw new BadRequest(
            'oidc_flow_expired',
            'This sign-in was not started in this browser or took too long; please start again.',
          );
        const id = await exchange(flow, query);
        if (flow.link !== undefined) {
          const other = await repo.identityUser(id.issuer, id.subject);
          if (other !== undefined && other !== flow.link) throw inUse();
          if (other === undefined) {
            const mine = await repo.identitiesOf(flow.link);
            if (mine.some((i) => i.issuer === id.issuer))
              throw new Conflict('already_linked', 'Your account is already linked to another identity there.');
            if (
              !(await repo.insertIdentity({
                userId: flow.link,
                issuer: id.issuer,
                subject: id.subject,
                email: id.email,
              }))
            )
              throw inUse();
          }
          return { location: `${appUrl}/account?oidc=linked`, clearCookie };
        }
        const token = await signIn(flow, id, meta);
        const redirect = flow.redirect ? `&redirect=${encodeURIComponent(flow.redirect)}` : '';
        return { location: `${appUrl}/login/callback#token=${token}${redirect}`, clearCookie };
      } catch (err) {
        if (err instanceof AppError) return fail(err);
        throw err;
      }
    },

    /**
     * `GET /api/crm/account/oidc` → `{configured, name, linked, identities:[{issuer, email, created_at}],
     * has_password}`.
     */
    async status(actor: Actor) {
      const [identities, hasPassword, c] = await Promise.all([
        repo.identitiesOf(actor.id),
        repo.hasPassword(actor.id),
        currentClient(),
      ]);
      return {
        configured: !!c,
        name: deps.name,
        linked: identities.length > 0,
        identities: identities.map((i) => ({ issuer: i.issuer, email: i.email, created_at: i.created_at })),
        has_password: hasPassword,
      };
    },

    /**
     * `DELETE /api/crm/account/oidc` → `{ok: true}`: unlink the identity provider. The account must keep a way to
     * sign in. @throws 409 `last_sign_in_method` when it has no password (set one through the reset link first);
     *   404 `not_linked`
     */
    async unlink(actor: Actor) {
      const identities = await repo.identitiesOf(actor.id);
      if (!identities.length)
        throw new AppError(404, 'not_linked', 'Your account is not linked to an identity provider.');
      if (!(await repo.hasPassword(actor.id)))
        throw new Conflict(
          'last_sign_in_method',
          'The identity provider is the only way into this account: set a password first (password reset link).',
        );
      await repo.deleteIdentities(actor.id);
      return { ok: true as const };
    },
  };
}

export type OidcService = ReturnType<typeof createOidcService>;

/**
 * Connecting the code host (docs/api.md, Connecting the code host): OAuth with the platform's code host app
 * (`CODEHOST_CLIENT_ID` / `CODEHOST_CLIENT_SECRET`, read from the secret store on every use), GitHub's shape —
 * authorization at `{CODEHOST_OAUTH_URL}/login/oauth/authorize` (with PKCE), the token at
 * `…/login/oauth/access_token`, the user at `{CODEHOST_API_URL}/user`, revocation at
 * `DELETE {CODEHOST_API_URL}/applications/{client_id}/token`.
 *
 * The access token is stored sealed (secrets/crypto.ts) and never answered. `files/clone` of an https URL on the
 * code host's origin (the origin of `CODEHOST_OAUTH_URL`) sends it to git, so the user's private repositories
 * clone; the cloud container reports `codehost_authed` while the account is connected. Disconnecting revokes the
 * token at the code host and forgets it.
 */
import { AppError, BadRequest, Upstream } from '../../http/errors.ts';
import type { Actor } from '../../http/auth.ts';
import type { Logger } from '../../lib/logger.ts';
import { clientFingerprint, type FlowCookies } from '../../lib/oauth-flow.ts';
import { randomToken, type Sealer } from '../../secrets/crypto.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { CodehostRepo } from './codehost.repo.ts';
import crypto from 'node:crypto';

/** The callback's path; its full address is the OAuth app's callback URL at the code host. */
export const CODEHOST_CALLBACK_PATH = '/api/crm/account/codehost/callback';
const COOKIE = 'crm_codehost_flow';
/** The scopes asked for: private repositories (clone) and the user's profile. */
export const CODEHOST_SCOPES = 'repo read:user';
/** Time limit of each call to the code host, in ms. */
const CODEHOST_TIMEOUT_MS = 15_000;

interface Flow {
  state: string;
  verifier: string;
  fp: string;
  user: number;
}

export interface CodehostDeps {
  repo: CodehostRepo;
  secrets: Pick<SecretStore, 'get'>;
  sealer: Sealer;
  flows: FlowCookies;
  /** `CODEHOST_OAUTH_URL` (its origin is also the clone URLs') and `CODEHOST_API_URL`. */
  oauthUrl: string;
  apiUrl: string;
  appUrl: string;
  log: Logger;
}

const unavailable = () =>
  new Upstream(503, 'codehost_unavailable', 'Connecting the code host is not available right now.');

/** Where the callback sends the browser, the error when it failed, and the cookie deletion. */
export interface CodehostCallbackOutcome {
  location: string;
  error?: AppError;
  clearCookie: string;
}

export function createCodehostService(deps: CodehostDeps) {
  const { repo, secrets, sealer, flows, appUrl, log } = deps;
  const redirectUri = `${appUrl}${CODEHOST_CALLBACK_PATH}`;
  const origin = new URL(deps.oauthUrl).origin;

  async function currentClient() {
    const [id, secret] = await Promise.all([secrets.get('CODEHOST_CLIENT_ID'), secrets.get('CODEHOST_CLIENT_SECRET')]);
    if (!id || !secret) return undefined;
    return { id, secret, fp: clientFingerprint(deps.oauthUrl, id, secret) };
  }

  /** One JSON call to the code host. @throws 503 `codehost_unavailable` when it cannot be reached */
  async function call(url: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
    try {
      const res = await fetch(url, {
        ...init,
        headers: { accept: 'application/json', 'user-agent': 'crm-service', ...init.headers },
        redirect: 'error',
        signal: AbortSignal.timeout(CODEHOST_TIMEOUT_MS),
      });
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      return { status: res.status, body };
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'code host unreachable');
      throw unavailable();
    }
  }

  const service = {
    /**
     * `POST /api/crm/account/codehost/connect` → `{authorize_url}` and the flow cookie: the web UI navigates
     * there. @throws 503 `codehost_unavailable` when the code host app is not configured
     */
    async connect(actor: Actor) {
      const c = await currentClient();
      if (!c) throw unavailable();
      const flow: Flow = { state: randomToken(24), verifier: randomToken(48), fp: c.fp, user: actor.id };
      const challenge = crypto.createHash('sha256').update(flow.verifier).digest('base64url');
      const url = `${deps.oauthUrl}/login/oauth/authorize?${new URLSearchParams({
        client_id: c.id,
        redirect_uri: redirectUri,
        scope: CODEHOST_SCOPES,
        state: flow.state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        allow_signup: 'false',
      })}`;
      return { authorize_url: url, cookie: flows.issue(COOKIE, CODEHOST_CALLBACK_PATH, flow) };
    },

    /**
     * `GET /api/crm/account/codehost/callback`: check the flow (cookie, state, app not rotated since), exchange the
     * code (with the PKCE verifier), read the user, store the token sealed. Never throws for a flow's failure.
     * @returns `{app_url}/account?codehost=connected`, or `?codehost_error=<code>` with the error
     */
    async callback(query: string, cookieHeader: string | undefined): Promise<CodehostCallbackOutcome> {
      const flow = flows.read<Flow>(cookieHeader, COOKIE);
      const clearCookie = flows.clear(COOKIE, CODEHOST_CALLBACK_PATH);
      try {
        if (!flow)
          throw new BadRequest(
            'codehost_flow_expired',
            'This connection was not started in this browser or took too long; please start again.',
          );
        const c = await currentClient();
        if (!c) throw unavailable();
        if (c.fp !== flow.fp)
          throw new BadRequest(
            'codehost_flow_stale',
            'The code host app changed while you were connecting; please start again.',
          );
        const params = new URLSearchParams(query);
        if (params.get('state') !== flow.state)
          throw new BadRequest('invalid_state', 'This answer does not belong to the connection you started.');
        const code = params.get('code');
        if (!code)
          throw new BadRequest('codehost_refused', 'The code host did not connect your account.', {
            reason: (params.get('error') ?? 'no_code').replace(/[^a-z_]/gi, '').slice(0, 40),
          });
        const tok = await call(`${deps.oauthUrl}/login/oauth/access_token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: c.id,
            client_secret: c.secret,
            code,
            redirect_uri: redirectUri,
            code_verifier: flow.verifier,
          }),
        });
        // GitHub's shape: an error is a 200 with `{error}`.
        const accessToken = tok.body.access_token;
        if (tok.status !== 200 || typeof accessToken !== 'string' || !accessToken)
          throw new BadRequest(
            'codehost_exchange_failed',
            'The code host did not accept this connection; please start again.',
          );
        const user = await call(`${deps.apiUrl}/user`, { headers: { authorization: `Bearer ${accessToken}` } });
        if (user.status !== 200 || typeof user.body.login !== 'string')
          throw new Upstream(502, 'codehost_failed', 'The code host did not tell who you are.');
        await repo.save({
          userId: flow.user,
          login: user.body.login.slice(0, 100),
          codehostUserId: String(user.body.id ?? ''),
          tokenSealed: sealer.seal(accessToken),
          scopes: typeof tok.body.scope === 'string' ? tok.body.scope.slice(0, 200) : '',
        });
        return { location: `${appUrl}/account?codehost=connected`, clearCookie };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return { location: `${appUrl}/account?codehost_error=${err.code}`, error: err, clearCookie };
      }
    },

    /** `GET /api/crm/account/codehost` → `{configured, connected, login, scopes, connected_at}`. */
    async status(actor: Actor) {
      const [link, c] = await Promise.all([repo.link(actor.id), currentClient()]);
      return {
        configured: !!c,
        connected: !!link,
        login: link?.login ?? null,
        scopes: link?.scopes ?? null,
        connected_at: link?.created_at ?? null,
      };
    },

    /**
     * `DELETE /api/crm/account/codehost` → `{ok: true, revoked}`: revoke the token at the code host and forget it.
     * The connection is forgotten even when the code host cannot be reached (`revoked: false`; the user may revoke
     * the app at the code host). @throws 404 `codehost_not_connected`
     */
    async disconnect(actor: Actor) {
      const link = await repo.remove(actor.id);
      if (!link) throw new AppError(404, 'codehost_not_connected', 'Your account is not connected to the code host.');
      const c = await currentClient();
      let revoked = false;
      if (c) {
        try {
          const r = await call(`${deps.apiUrl}/applications/${encodeURIComponent(c.id)}/token`, {
            method: 'DELETE',
            headers: {
              authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ access_token: sealer.open(link.token_enc) }),
          });
          // 404: the code host no longer knows the token (already revoked).
          revoked = r.status === 204 || r.status === 404;
        } catch {
          revoked = false;
        }
      }
      if (!revoked) log.warn({ user: actor.id }, 'code host token not revoked at the code host');
      return { ok: true as const, revoked };
    },

    /** Whether user `userId` has connected the code host. */
    async connected(userId: number): Promise<boolean> {
      return !!(await repo.link(userId));
    },

    /**
     * The credential git sends for `url` on behalf of user `userId`: their token, for https (or the configured
     * scheme) URLs on the code host's origin only. @returns the URL prefix it applies to and the `Authorization`
     * header value, or undefined (another host, or not connected)
     */
    async cloneCredential(userId: number, url: URL): Promise<{ prefix: string; header: string } | undefined> {
      if (url.origin !== origin || url.username || url.password) return undefined;
      const link = await repo.link(userId);
      if (!link) return undefined;
      const token = sealer.open(link.token_enc);
      return {
        prefix: `${origin}/`,
        header: `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`,
      };
    },
  };
  return service;
}

export type CodehostService = ReturnType<typeof createCodehostService>;

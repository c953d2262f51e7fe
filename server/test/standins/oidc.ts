/**
 * A real OpenID provider for tests: `oidc-provider` (the certified Node implementation) on 127.0.0.1 over http,
 * with discovery, PKCE required, and its own sign-in step replaced by an instant one: whoever `loginAs(id)` names
 * is signed in and consents to `openid email profile`. Clients live in a map the test may change (a secret
 * rotation at the provider). `follow(url)` plays the browser: it follows the provider's redirects with their
 * cookies until the provider sends it back to the relying party, and returns that address.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface IdpAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** Start the provider. @param clients the registered clients (more may be set in the returned map). */
export async function startOidcProvider(clients: IdpClient[] = []) {
  const clientMap = new Map(clients.map((c) => [c.client_id, c]));
  const accounts = new Map<string, IdpAccount>();
  let login: string | undefined;
  const store = new Map<string, Record<string, unknown>>();

  /** Storage of the provider's models (sessions, codes, tokens…) in memory; clients come from `clientMap`. */
  class Adapter {
    constructor(private readonly model: string) {}
    key = (id: string) => `${this.model}:${id}`;
    async upsert(id: string, payload: Record<string, unknown>) {
      store.set(this.key(id), payload);
      if (this.model === 'Session') store.set(`uid:${payload.uid}`, { id });
    }
    async find(id: string) {
      if (this.model === 'Client') {
        const c = clientMap.get(id);
        return c && { ...c, grant_types: ['authorization_code'], response_types: ['code'] };
      }
      return store.get(this.key(id));
    }
    async findByUid(uid: string) {
      const ref = store.get(`uid:${uid}`) as { id: string } | undefined;
      return ref ? store.get(this.key(ref.id)) : undefined;
    }
    async findByUserCode() {
      return undefined;
    }
    async consume(id: string) {
      const p = store.get(this.key(id));
      if (p) p.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId() {}
  }

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' };
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    adapter: Adapter as never,
    jwks: { keys: [jwk as never] },
    cookies: { keys: ['test-idp-cookie-key-0123456789'] },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: false } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const a = accounts.get(sub);
      return a && { accountId: sub, claims: async () => ({ sub, ...a }) };
    },
    // Every client is granted what it asks for (no consent step).
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  provider.on('server_error', (_ctx, err) => console.error('test IdP error', err));
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      const accountId = login;
      if (!accountId) {
        res.writeHead(400).end('no test account to sign in');
        return;
      }
      provider
        .interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false })
        .catch((err) => res.writeHead(500).end(String(err)));
      return;
    }
    callback(req, res);
  });

  return {
    issuer,
    clients: clientMap,
    accounts,
    /** Who the next sign-in at the provider is. */
    loginAs(id: string) {
      login = id;
    },
    /**
     * Follow `url` (an authorization address) through the provider with a cookie jar, as a browser would.
     * @returns the first address outside the provider (the relying party's callback with `code` and `state`)
     */
    async follow(url: string): Promise<string> {
      const jar = new Map<string, string>();
      let next = url;
      for (let i = 0; i < 10; i++) {
        if (!next.startsWith(issuer)) return next;
        const res = await fetch(next, {
          redirect: 'manual',
          headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(';');
          const eq = pair.indexOf('=');
          jar.set(pair.slice(0, eq), pair.slice(eq + 1));
        }
        const location = res.headers.get('location');
        if (!location) throw new Error(`the provider answered ${res.status}: ${await res.text()}`);
        next = new URL(location, next).href;
      }
      throw new Error('too many redirects at the provider');
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
